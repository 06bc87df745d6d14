import { type ConfigIssue, formatPath, type PathSegment } from "./config-error.js";

export type Env = Record<string, string | undefined>;

/** A value kept from a reader: it names a variable in a section that reader does not read. */
export interface WithheldValue {
  /** Where the value is, e.g. "models.providers.openai.apiKey". */
  path: string;
  segments: readonly PathSegment[];
  /** The top-level section it is in. */
  section: string;
  /** The variables it names without a `:-` default. */
  names: string[];
}

export interface SubstituteOptions {
  /**
   * The top-level keys whose references come from `env`. In every other one the environment is
   * never consulted: `${NAME:-default}` gives its default, and a value naming a variable without
   * one stays as written (no issue) and is listed in `withheld`, for the caller to remove once it
   * has validated the tree, so a secret can never reach a reader that does not use it.
   * Default: every key.
   */
  sections?: ReadonlySet<string>;
}

// `$${` escapes a literal "${"; otherwise `${NAME}` or `${NAME:-default}`.
const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NO_ENV: Env = {};

interface Problem {
  message: string;
  /** Set when the problem is this variable being unset (not a mistake in the text). */
  unset?: string;
}

interface Substituted {
  value: string;
  /** The whole string was references only, so an empty result means "not set". */
  onlyReferences: boolean;
  problems: Problem[];
}

function substituteString(text: string, env: Env): Substituted {
  const problems: Problem[] = [];
  let onlyReferences = true;
  let last = 0;
  let out = "";
  for (const match of text.matchAll(REFERENCE)) {
    if (match.index > last) onlyReferences = false;
    out += text.slice(last, match.index);
    last = match.index + match[0].length;
    if (match[0] === "$${") {
      onlyReferences = false;
      out += "${";
      continue;
    }
    const body = match[1];
    if (body === undefined) {
      problems.push({ message: 'unterminated "${" (write "$${" for a literal "${")' });
      continue;
    }
    const sep = body.indexOf(":-");
    const name = sep === -1 ? body : body.slice(0, sep);
    if (!NAME.test(name)) {
      problems.push({ message: `invalid environment variable reference "\${${body}}"` });
      continue;
    }
    const value = env[name];
    // Shell semantics: ":-" also replaces a variable that is set but empty.
    if (sep !== -1) out += value === undefined || value === "" ? body.slice(sep + 2) : value;
    else if (value === undefined) problems.push({ message: `environment variable ${name} is not set`, unset: name });
    else out += value;
  }
  if (last < text.length) onlyReferences = false;
  out += text.slice(last);
  return { value: out, onlyReferences: onlyReferences && last > 0, problems };
}

/** How one subtree is substituted: from `env`, or (in a section not read) withholding what needs it. */
interface Scope {
  env: Env;
  /** The section whose unset references withhold their value rather than being issues. */
  withholdIn?: string;
}

/**
 * Replaces `${NAME}` references in every string value of a parsed config tree (keys are
 * left alone, so the file's structure cannot come from the environment). An object key whose
 * value was only references and came out empty is dropped, so `${PASSWORD:-}` means "unset".
 * With `sections`, the top-level keys not listed are substituted from no environment at all.
 */
export function substituteEnv(
  root: unknown,
  env: Env,
  opts: SubstituteOptions = {},
): { value: unknown; issues: ConfigIssue[]; withheld: WithheldValue[] } {
  const issues: ConfigIssue[] = [];
  const withheld: WithheldValue[] = [];
  const visit = (node: unknown, path: PathSegment[], scope: Scope): { keep: boolean; value: unknown } => {
    if (typeof node === "string") {
      const result = substituteString(node, scope.env);
      const unset = result.problems.flatMap((problem) => (problem.unset === undefined ? [] : [problem.unset]));
      const section = unset.length > 0 ? scope.withholdIn : undefined;
      // A mistake in the text is an issue for every reader; an unset variable only for those that read it.
      for (const problem of result.problems) {
        if (section === undefined || problem.unset === undefined) issues.push({ path: formatPath(path), message: problem.message });
      }
      if (section !== undefined) {
        withheld.push({ path: formatPath(path), segments: path, section, names: unset });
        return { keep: true, value: node };
      }
      return { keep: !(result.onlyReferences && result.value === ""), value: result.value };
    }
    if (Array.isArray(node)) {
      // Array items are kept even when empty so that issue paths keep their indexes.
      return { keep: true, value: node.map((item, i) => visit(item, [...path, i], scope).value) };
    }
    if (node !== null && typeof node === "object") {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        const unread = path.length === 0 && opts.sections !== undefined && !opts.sections.has(key);
        const result = visit(child, [...path, key], unread ? { env: NO_ENV, withholdIn: key } : scope);
        // defineProperty, not assignment: a "__proto__" key must stay data (and be rejected as unknown).
        if (result.keep)
          Object.defineProperty(out, key, {
            value: result.value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
      }
      return { keep: true, value: out };
    }
    return { keep: true, value: node };
  };
  return { value: visit(root, [], { env }).value, issues, withheld };
}

/**
 * Takes the withheld values out of a tree shaped like the substituted one (the validated
 * config): keys are deleted and array items removed, the last first so indexes stay right.
 */
export function removeWithheld<T>(tree: T, withheld: readonly WithheldValue[]): T {
  for (const { segments } of [...withheld].reverse()) {
    let node: unknown = tree;
    for (const segment of segments.slice(0, -1)) {
      node = node !== null && typeof node === "object" ? (node as Record<PathSegment, unknown>)[segment] : undefined;
    }
    const last = segments.at(-1);
    if (Array.isArray(node) && typeof last === "number") node.splice(last, 1);
    else if (node !== null && typeof node === "object" && last !== undefined) delete (node as Record<PathSegment, unknown>)[last];
  }
  return tree;
}
