import { describe, expect, it } from "vitest";
import { ConfigError, type ConfigIssue, parseConfig } from "./index.js";

function issuesOf(text: string, env: Record<string, string | undefined>): ConfigIssue[] {
  try {
    parseConfig(text, { env });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("${NAME} substitution", () => {
  it("replaces references anywhere in a string value, at any depth", () => {
    const config = parseConfig(
      `{ gateway: { auth: { token: "\${TOKEN}" }, dataDir: "\${HOME}/gw-\${STAGE}" },
         agents: { list: [{ id: "main", name: "Main", model: "builtin/echo", tools: ["\${TOOL}"] }] } }`,
      { env: { TOKEN: "abc", HOME: "/home/u", STAGE: "dev", TOOL: "time.now" } },
    );
    expect(config.gateway.auth.token).toBe("abc");
    expect(config.gateway.dataDir).toBe("/home/u/gw-dev");
    expect(config.agents.list[0]?.tools).toEqual(["time.now"]);
  });

  it("uses the :- default when the variable is unset or empty", () => {
    const text = `{ gateway: { bind: "\${BIND:-0.0.0.0}" } }`;
    expect(parseConfig(text, { env: {} }).gateway.bind).toBe("0.0.0.0");
    expect(parseConfig(text, { env: { BIND: "" } }).gateway.bind).toBe("0.0.0.0");
    expect(parseConfig(text, { env: { BIND: "::" } }).gateway.bind).toBe("::");
  });

  it("makes a key absent when it was only references and came out empty", () => {
    const config = parseConfig(`{ gateway: { auth: { token: "t", password: "\${GATEWAY_PASSWORD:-}" } } }`, {
      env: {},
    });
    expect(config.gateway.auth).not.toHaveProperty("password");
    // Absent, so the default applies rather than an empty string failing validation.
    expect(parseConfig(`{ gateway: { dataDir: "\${DATA:-}" } }`, { env: {} }).gateway.dataDir).toBe("./data");
  });

  it("keeps an empty result that had literal text around it", () => {
    expect(parseConfig(`{ redis: { keyPrefix: "\${P:-}" } }`, { env: {} }).redis.keyPrefix).toBe("gw:");
    expect(
      parseConfig(
        `{ agents: { list: [{ id: "main", name: "M", model: "builtin/echo", description: "x\${D:-}" }] } }`,
        { env: {} },
      ).agents.list[0]?.description,
    ).toBe("x");
  });

  it("reports an unset variable at the key that references it", () => {
    expect(issuesOf(`{ gateway: { auth: { token: "\${GATEWAY_TOKEN}" } } }`, {})).toEqual([
      { path: "gateway.auth.token", message: "environment variable GATEWAY_TOKEN is not set" },
    ]);
    expect(
      issuesOf(`{ agents: { list: [{ id: "main", name: "M", model: "\${MODEL}" }] } }`, {}).map(
        (issue) => issue.path,
      ),
    ).toEqual(["agents.list[0].model"]);
  });

  it("says a required key's variable is unset, not that the key is missing", () => {
    expect(issuesOf(`{ hooks: { enabled: true, token: "\${HOOKS_TOKEN}" } }`, {})).toEqual([
      { path: "hooks.token", message: "environment variable HOOKS_TOKEN is not set" },
    ]);
  });

  it("treats $${ as a literal ${", () => {
    const config = parseConfig(
      `{ agents: { list: [{ id: "main", name: "M", model: "builtin/echo", systemPrompt: "cost: $\${AMOUNT}" }] } }`,
      {
        env: { AMOUNT: "no" },
      },
    );
    expect(config.agents.list[0]?.systemPrompt).toBe("cost: ${AMOUNT}");
  });

  it("reports malformed references", () => {
    expect(issuesOf(`{ gateway: { bind: "\${1BAD}", dataDir: "\${OPEN" } }`, {})).toEqual([
      { path: "gateway.bind", message: 'invalid environment variable reference "${1BAD}"' },
      { path: "gateway.dataDir", message: 'unterminated "${" (write "$${" for a literal "${")' },
    ]);
  });

  it("substitutes before validation and yields strings, never structure", () => {
    expect(issuesOf(`{ gateway: { port: "\${PORT}" } }`, { PORT: "80" })).toEqual([
      { path: "gateway.port", message: "Invalid input: expected number, received string" },
    ]);
    expect(
      issuesOf(`{ channels: { "\${X}": { kind: "t" } } }`, { X: "tg" }).map((issue) => issue.path),
    ).toEqual(['channels["${X}"]']);
    const config = parseConfig(`{ gateway: { auth: { token: "\${T}" } } }`, { env: { T: '{ "evil": 1 }' } });
    expect(config.gateway.auth.token).toBe('{ "evil": 1 }');
  });
});
