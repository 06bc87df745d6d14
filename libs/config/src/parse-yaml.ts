import { createRequire } from "node:module";
import type * as Yaml from "yaml";
import type { LineCounter, YAMLError } from "yaml";
import { type ConfigIssue, formatPath, type PathSegment } from "./config-error.js";

let yamlModule: typeof Yaml | undefined;

/**
 * The `yaml` package (about 9 MiB resident) is loaded by the first YAML file read, not by every
 * process: most deployments' config is JSON5. Synchronous, as config parsing is.
 */
function yaml(): typeof Yaml {
  yamlModule ??= createRequire(import.meta.url)("yaml") as typeof Yaml;
  return yamlModule;
}

/**
 * Parses a YAML config file into plain data, or the problems that stop it, each with its line
 * and column and, where the place lies inside a key, that key's path. YAML 1.2 core schema, so
 * `yes`/`no`/`on` stay strings and only `true`/`false` are booleans; duplicate keys, unknown tags
 * and several documents in one file are errors rather than silently resolved.
 */
export function parseYaml(text: string): { value: unknown } | { issues: ConfigIssue[] } {
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, { schema: "core", uniqueKeys: true, prettyErrors: false, lineCounter: lines });
  const problems: YAMLError[] = [...doc.errors, ...doc.warnings];
  if (problems.length > 0) {
    return {
      issues: problems.map((problem) => ({
        path: pathAt(doc.contents, problem.pos[0]),
        message: `YAML syntax error ${place(lines, problem)}: ${problem.message}`,
      })),
    };
  }
  try {
    // maxAliasCount bounds what aliases may expand to (a "billion laughs" file).
    return { value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (err) {
    return { issues: [{ path: "", message: `YAML error: ${(err as Error).message}` }] };
  }
}

function place(lines: LineCounter, problem: YAMLError): string {
  const { line, col } = lines.linePos(problem.pos[0]);
  return `at line ${line}, column ${col}`;
}

/** The key path of the deepest entry whose key or value spans `offset`; "" at the top level. */
function pathAt(root: unknown, offset: number): string {
  const path: PathSegment[] = [];
  let node = root;
  for (;;) {
    const next = childAt(node, offset);
    if (next === undefined) return formatPath(path);
    path.push(next.segment);
    node = next.node;
  }
}

function childAt(node: unknown, offset: number): { segment: PathSegment; node: unknown } | undefined {
  const { isMap, isPair, isScalar, isSeq } = yaml();
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const start = rangeOf(pair.key)?.[0];
      const end = rangeOf(pair.value)?.[1] ?? rangeOf(pair.key)?.[1];
      if (start === undefined || end === undefined || offset < start || offset > end) continue;
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      return { segment: key, node: pair.value };
    }
  }
  if (isSeq(node)) {
    for (const [index, item] of node.items.entries()) {
      const range = rangeOf(item);
      if (range !== undefined && offset >= range[0] && offset <= range[1]) return { segment: index, node: item };
    }
  }
  return undefined;
}

function rangeOf(node: unknown): readonly [number, number, number] | undefined {
  const range = (node as { range?: [number, number, number] | null } | null | undefined)?.range;
  return range ?? undefined;
}
