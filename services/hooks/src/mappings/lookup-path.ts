/**
 * Paths into a webhook request, as mapping templates and `idempotencyField` name them:
 * `payload.issue.title`, `payload.commits[0].id`, `headers.x-github-event`, `query.ref`.
 * A lookup reads data only (own properties, array items): nothing in a path can call code.
 */

export const LOOKUP_ROOTS = ["payload", "headers", "query"] as const;
export type LookupRoot = (typeof LOOKUP_ROOTS)[number];

export type LookupStep = { key: string } | { index: number };

export interface LookupPath {
  root: LookupRoot;
  steps: LookupStep[];
  /** As written, for messages. */
  source: string;
}

/** What a path is looked up in: the parsed body, and the request's headers and query. */
export interface LookupContext {
  payload: unknown;
  headers: Readonly<Record<string, string>>;
  query: Readonly<Record<string, string>>;
}

// A key is anything up to the next `.`, `[`, `]`, brace or whitespace: header names (`x-github-event`),
// JSON keys with `-`, `$`, `@` or non-ASCII letters.
const STEP = /\.([^.[\]{}\s]+)|\[(\d{1,9})\]/y;

/** Parses `root(.key|[n])*` (a bare root is the whole payload, or all headers); throws an Error saying what is wrong. */
export function parseLookupPath(text: string): LookupPath {
  const source = text.trim();
  const rootMatch = /^[A-Za-z_]+/.exec(source);
  const root = rootMatch?.[0];
  if (root === undefined || !(LOOKUP_ROOTS as readonly string[]).includes(root)) {
    throw new Error(`"${source}" must start with ${LOOKUP_ROOTS.join(", ")} (e.g. payload.issue.title)`);
  }
  const steps: LookupStep[] = [];
  STEP.lastIndex = root.length;
  while (STEP.lastIndex < source.length) {
    const at = STEP.lastIndex;
    const match = STEP.exec(source);
    if (match === null) throw new Error(`"${source}" is not a path: unexpected "${source.slice(at)}"`);
    steps.push(match[1] !== undefined ? { key: match[1] } : { index: Number(match[2]) });
  }
  return { root: root as LookupRoot, steps, source };
}

/** The value at `path`, or undefined when any step is missing. Header names match in any case. */
export function lookup(path: LookupPath, ctx: LookupContext): unknown {
  let value: unknown = ctx[path.root];
  for (const [i, step] of path.steps.entries()) {
    const headerName = path.root === "headers" && i === 0 && "key" in step ? step.key.toLowerCase() : undefined;
    value = stepInto(value, headerName !== undefined ? { key: headerName } : step);
    if (value === undefined) return undefined;
  }
  return value;
}

function stepInto(value: unknown, step: LookupStep): unknown {
  if ("index" in step) return Array.isArray(value) ? value[step.index] : undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  // Own properties only: `__proto__`, `constructor` and friends are just missing fields.
  return Object.hasOwn(value, step.key) ? (value as Record<string, unknown>)[step.key] : undefined;
}

/** How a looked-up value reads in text: strings as they are, missing and null as "", objects as JSON. */
export function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}
