import { type ConfigIssue, formatPath, type PathSegment } from "./config-error.js";

export type Env = Record<string, string | undefined>;

// `$${` escapes a literal "${"; otherwise `${NAME}` or `${NAME:-default}`.
const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Substituted {
  value: string;
  /** The whole string was references only, so an empty result means "not set". */
  onlyReferences: boolean;
  issues: string[];
}

function substituteString(text: string, env: Env): Substituted {
  const issues: string[] = [];
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
      issues.push('unterminated "${" (write "$${" for a literal "${")');
      continue;
    }
    const sep = body.indexOf(":-");
    const name = sep === -1 ? body : body.slice(0, sep);
    if (!NAME.test(name)) {
      issues.push(`invalid environment variable reference "\${${body}}"`);
      continue;
    }
    const value = env[name];
    // Shell semantics: ":-" also replaces a variable that is set but empty.
    if (sep !== -1) out += value === undefined || value === "" ? body.slice(sep + 2) : value;
    else if (value === undefined) issues.push(`environment variable ${name} is not set`);
    else out += value;
  }
  if (last < text.length) onlyReferences = false;
  out += text.slice(last);
  return { value: out, onlyReferences: onlyReferences && last > 0, issues };
}

/**
 * Replaces `${NAME}` references in every string value of a parsed config tree (keys are
 * left alone, so the file's structure cannot come from the environment). An object key whose
 * value was only references and came out empty is dropped, so `${PASSWORD:-}` means "unset".
 */
export function substituteEnv(root: unknown, env: Env): { value: unknown; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const visit = (node: unknown, path: PathSegment[]): { keep: boolean; value: unknown } => {
    if (typeof node === "string") {
      const result = substituteString(node, env);
      for (const message of result.issues) issues.push({ path: formatPath(path), message });
      return { keep: !(result.onlyReferences && result.value === ""), value: result.value };
    }
    if (Array.isArray(node)) {
      // Array items are kept even when empty so that issue paths keep their indexes.
      return { keep: true, value: node.map((item, i) => visit(item, [...path, i]).value) };
    }
    if (node !== null && typeof node === "object") {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        const result = visit(child, [...path, key]);
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
  return { value: visit(root, []).value, issues };
}
