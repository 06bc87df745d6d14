import { readFileSync } from "node:fs";
import { extname, resolve } from "node:path";
import JSON5 from "json5";
import { z } from "zod";
import { ConfigError, type ConfigIssue, fromZodIssues } from "./config-error.js";
import { deepFreeze } from "./deep-freeze.js";
import { type Env, removeWithheld, substituteEnv, type WithheldValue } from "./env-substitution.js";
import { knownKeysAt, schemaAt } from "./known-keys.js";
import { parseYaml } from "./parse-yaml.js";
import { type ConfigSection, type GatewayConfig, type GatewayConfigInput, gatewayConfigSchema } from "./schema.js";

/** Every key optional, at any depth; arrays are replaced whole. */
export type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** How the text is written: JSON5 (the default) or YAML. */
export type ConfigFormat = "json5" | "yaml";

/**
 * A distributed service and the config sections it reads. Only those take their `${NAME}`
 * values from the environment (and fail when one is unset); in the others a value naming a
 * variable is validated as written, then left out of the service's view, so a secret it does not
 * use never reaches it (DESIGN §9: platform secrets live only in delivery). `${NAME:-default}`
 * there gives its default.
 */
export interface ConfigReader {
  service: string;
  sections: readonly ConfigSection[];
}

export interface ParseOptions {
  /** Values for `${NAME}` references; pass `process.env` from a main.ts. */
  env: Env;
  /** Names the text in errors, usually the file path. */
  source?: string;
  /** Substitute only in the sections this service reads; default: every section (embedded mode, `config check`). */
  reader?: ConfigReader;
  /** Default "json5"; loadConfigFile picks "yaml" for `.yaml` and `.yml` files. */
  format?: ConfigFormat;
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

/** Parses JSON5 or YAML text, substitutes `${NAME}` from `env`, validates, and returns a frozen config. */
export function parseConfig(text: string, opts: ParseOptions): GatewayConfig {
  const source = opts.source ?? "<inline>";
  if (opts.format === "yaml") {
    const parsed = parseYaml(text);
    if ("issues" in parsed) throw new ConfigError(source, parsed.issues);
    return validate(parsed.value, source, opts.env, opts.reader);
  }
  let raw: unknown;
  try {
    raw = JSON5.parse(text);
  } catch (err) {
    throw new ConfigError(source, [{ path: "", message: syntaxMessage(err) }], { cause: err });
  }
  return validate(raw, source, opts.env, opts.reader);
}

/** The format a config file is read as, by its extension: `.yaml` and `.yml` are YAML, anything else JSON5. */
function configFormatOf(path: string): ConfigFormat {
  const ext = extname(path).toLowerCase();
  return ext === ".yaml" || ext === ".yml" ? "yaml" : "json5";
}

export function loadConfigFile(path: string, opts: { env: Env; reader?: ConfigReader }): GatewayConfig {
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
  return parseConfig(text, { ...opts, source: path, format: configFormatOf(path) });
}

/** The config that runs with no file at all, optionally with some keys set (handy in tests). */
export function defaultConfig(overrides?: DeepPartial<GatewayConfigInput>): GatewayConfig {
  return validate(overrides ?? {}, "defaults");
}

function validate(raw: unknown, source: string, env?: Env, reader?: ConfigReader): GatewayConfig {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(source, [{ path: "", message: "expected an object at the top level" }]);
  }
  let envIssues: ConfigIssue[] = [];
  let withheld: WithheldValue[] = [];
  let input = raw;
  if (env) {
    const substituted = substituteEnv(raw, env, reader && { sections: new Set<string>(reader.sections) });
    envIssues = substituted.issues;
    withheld = substituted.withheld;
    input = substituted.value as object;
  }
  const schema = gatewayConfigSchema();
  // Without zod's compiled fast path: it writes and compiles a parser for each of the config's
  // objects (about 100) on its first parse, code that pays only for objects parsed many times,
  // and a config is parsed once (docs/decisions.md, Runtime).
  const ctx = { error: errorMap, jitless: true };
  // Withheld values are checked as written (a reference passes for a token), then left out.
  let result = schema.safeParse(input, ctx);
  if (!result.success && withheld.length > 0 && standInForWithheld(schema, input, withheld, result.error.issues)) {
    result = schema.safeParse(input, ctx);
  }
  if (result.success && envIssues.length === 0) return deepFreeze(removeWithheld(result.data, withheld));
  const withheldAt = new Map(withheld.map((value) => [value.path, value]));
  // A missing variable also leaves its key absent; say why once, not "is required" as well.
  const envPaths = new Set(envIssues.map((issue) => issue.path));
  const schemaIssues = result.success
    ? []
    : fromZodIssues(result.error.issues, (path) => knownKeysAt(schema, path))
        .filter((issue) => !envPaths.has(issue.path))
        .map((issue) => {
          const value = withheldAt.get(issue.path);
          return value && reader ? { path: issue.path, message: withheldMessage(issue.message, value, reader) } : issue;
        });
  throw new ConfigError(source, [...envIssues, ...schemaIssues]);
}

/**
 * What a service does not read it leaves alone (issue 23 §3): a withheld value the schema refuses
 * as written (`${OPENAI_BASE_URL}` is no URL) gets a stand-in of the kind its key takes, for the
 * check only; withheld values are removed from the result anyway. True when one was put in.
 */
function standInForWithheld(root: z.core.$ZodType, input: object, withheld: readonly WithheldValue[], issues: readonly z.core.$ZodIssue[]): boolean {
  const refused = new Set(issues.map((issue) => issue.path.join(".")));
  let changed = false;
  for (const value of withheld) {
    if (!refused.has(value.segments.join("."))) continue;
    const schema = schemaAt(root, value.segments);
    const standIn = schema && STAND_INS.find((candidate) => z.safeParse(schema, candidate).success);
    if (standIn === undefined) continue;
    setAt(input, value.segments, standIn);
    changed = true;
  }
  return changed;
}

/** Values of the kinds config keys take, tried in turn. */
const STAND_INS: readonly unknown[] = ["https://withheld.invalid/", "withheld", 1, 0, true, false, "127.0.0.1"];

function setAt(tree: object, segments: readonly (string | number)[], value: unknown): void {
  let node: unknown = tree;
  for (const segment of segments.slice(0, -1)) node = (node as Record<string | number, unknown>)[segment];
  (node as Record<string | number, unknown>)[segments.at(-1)!] = value;
}

/** A withheld value the schema refuses as written: why the reader did not substitute it, and the way out. */
function withheldMessage(problem: string, value: WithheldValue, reader: ConfigReader): string {
  const refs = value.names.map((name) => `\${${name}}`).join(", ");
  return (
    `${problem}, as written: ${reader.service} does not read "${value.section}", so it leaves ${refs} unresolved ` +
    `(write the value itself, or give the reference a default: \${${value.names[0]}:-...})`
  );
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
