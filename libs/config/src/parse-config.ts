import { readFileSync } from "node:fs";
import { extname, resolve } from "node:path";
import JSON5 from "json5";
import type { z } from "zod";
import { ConfigError, type ConfigIssue, fromZodIssues } from "./config-error.js";
import { deepFreeze } from "./deep-freeze.js";
import { type Env, substituteEnv } from "./env-substitution.js";
import { knownKeysAt } from "./known-keys.js";
import { type GatewayConfig, type GatewayConfigInput, GatewayConfigSchema } from "./schema.js";

/** Every key optional, at any depth; arrays are replaced whole. */
export type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

export interface ParseOptions {
  /** Values for `${NAME}` references; pass `process.env` from a main.ts. */
  env: Env;
  /** Names the text in errors, usually the file path. */
  source?: string;
}

// Zod's default for a missing key reads "expected string, received undefined".
const errorMap: z.core.$ZodErrorMap = (issue) => {
  if (issue.input !== undefined) return undefined;
  if (issue.code === "invalid_type") return `is required (expected ${issue.expected})`;
  if (issue.code === "invalid_value") {
    return `is required (expected one of ${issue.values.map((value) => JSON.stringify(value)).join("|")})`;
  }
  return undefined;
};

/** Parses JSON5 text, substitutes `${NAME}` from `env`, validates, and returns a frozen config. */
export function parseConfig(text: string, opts: ParseOptions): GatewayConfig {
  const source = opts.source ?? "<inline>";
  let raw: unknown;
  try {
    raw = JSON5.parse(text);
  } catch (err) {
    throw new ConfigError(source, [{ path: "", message: syntaxMessage(err) }], { cause: err });
  }
  return validate(raw, source, opts.env);
}

export function loadConfigFile(path: string, opts: { env: Env }): GatewayConfig {
  const ext = extname(path).toLowerCase();
  if (ext === ".yaml" || ext === ".yml") {
    throw new ConfigError(path, [
      { path: "", message: "YAML config files are not supported yet; use JSON5" },
    ]);
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === "ENOENT"
        ? `config file not found: ${resolve(path)}`
        : `cannot read config file ${resolve(path)} (${code ?? err})`;
    throw new ConfigError(path, [{ path: "", message }], { cause: err });
  }
  return parseConfig(text, { env: opts.env, source: path });
}

/** The config that runs with no file at all, optionally with some keys set (handy in tests). */
export function defaultConfig(overrides?: DeepPartial<GatewayConfigInput>): GatewayConfig {
  return validate(overrides ?? {}, "defaults");
}

function validate(raw: unknown, source: string, env?: Env): GatewayConfig {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(source, [{ path: "", message: "expected an object at the top level" }]);
  }
  let envIssues: ConfigIssue[] = [];
  let input = raw;
  if (env) {
    const substituted = substituteEnv(raw, env);
    envIssues = substituted.issues;
    input = substituted.value as object;
  }
  const result = GatewayConfigSchema.safeParse(input, { error: errorMap });
  if (result.success && envIssues.length === 0) return deepFreeze(result.data);
  // A missing variable also leaves its key absent; say why once, not "is required" as well.
  const envPaths = new Set(envIssues.map((issue) => issue.path));
  const schemaIssues = result.success
    ? []
    : fromZodIssues(result.error.issues, (path) => knownKeysAt(GatewayConfigSchema, path)).filter(
        (issue) => !envPaths.has(issue.path),
      );
  throw new ConfigError(source, [...envIssues, ...schemaIssues]);
}

function syntaxMessage(err: unknown): string {
  if (!(err instanceof SyntaxError)) return `cannot parse JSON5: ${String(err)}`;
  const { lineNumber, columnNumber } = err as SyntaxError & { lineNumber?: number; columnNumber?: number };
  // json5 phrases it "JSON5: invalid character 'x' at 3:5"; keep the reason, spell out the place.
  const reason = err.message.replace(/^JSON5: /, "").replace(/ at \d+:\d+$/, "");
  return lineNumber === undefined
    ? `JSON5 syntax error: ${reason}`
    : `JSON5 syntax error at line ${lineNumber}, column ${columnNumber}: ${reason}`;
}
