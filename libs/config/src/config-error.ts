import type { z } from "zod";
import { closestKey } from "./known-keys.js";

export interface ConfigIssue {
  /** Where the problem is, e.g. "gateway.auth.token" or "agents.list[0].model"; "" for the file as a whole. */
  path: string;
  message: string;
}

export type PathSegment = string | number;

/** A config that cannot be used; `message` lists every issue so a start-up log line says it all. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly issues: ConfigIssue[];
  /** The file path, or a label for inline text. */
  readonly source: string;

  constructor(source: string, issues: ConfigIssue[], options?: { cause?: unknown }) {
    const lines = issues.map((issue) => `  - ${issue.path === "" ? "" : `${issue.path}: `}${issue.message}`);
    super(`invalid config (${source}):\n${lines.join("\n")}`, options);
    this.source = source;
    this.issues = issues;
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && IDENTIFIER.test(segment))
      out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/**
 * One issue per unknown key (zod reports them together on the parent), with a spelling hint
 * from `knownKeys`, which names the keys accepted at a path.
 */
export function fromZodIssues(
  issues: readonly z.core.$ZodIssue[],
  knownKeys: (path: readonly PropertyKey[]) => string[],
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      const known = knownKeys(issue.path);
      for (const key of issue.keys) {
        out.push({ path: formatPath([...issue.path, key]), message: unknownKeyMessage(key, known) });
      }
    } else {
      out.push({ path: formatPath(issue.path), message: issue.message });
    }
  }
  return out;
}

function unknownKeyMessage(key: string, known: readonly string[]): string {
  if (known.length === 0) return "unknown key";
  const guess = closestKey(key, known);
  return `unknown key${guess ? ` (did you mean "${guess}"?)` : ""}; expected one of: ${known.join(", ")}`;
}
