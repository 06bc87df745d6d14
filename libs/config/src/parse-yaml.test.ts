import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, type ConfigIssue, loadConfigFile, parseConfig } from "./index.js";

function yamlIssues(text: string, env: Record<string, string | undefined> = {}): ConfigIssue[] {
  try {
    parseConfig(text, { env, format: "yaml" });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

const YAML_CONFIG = `# comments are fine
gateway:
  port: 18790
  auth:
    token: \${TOKEN}            # unquoted references stay strings
    password: "\${PASSWORD:-}"  # only references, empty: the key is absent
  trustedProxies: [10.0.0.0/8]
agents:
  default: main
  list:
    - id: main
      name: Main
      model: builtin/echo
      tools: [time.now]
hooks:
  enabled: true
  token: "\${HOOKS_TOKEN}"
  mappings:
    - path: github
      action:
        kind: agent
        message: "Issue {{ payload.issue.title }} was {{ payload.action }}"
`;

const JSON5_CONFIG = `{
  gateway: { port: 18790, auth: { token: "\${TOKEN}", password: "\${PASSWORD:-}" }, trustedProxies: ["10.0.0.0/8"] },
  agents: { default: "main", list: [{ id: "main", name: "Main", model: "builtin/echo", tools: ["time.now"] }] },
  hooks: { enabled: true, token: "\${HOOKS_TOKEN}",
           mappings: [{ path: "github", action: { kind: "agent", message: "Issue {{ payload.issue.title }} was {{ payload.action }}" } }] },
}`;

describe("YAML config text", () => {
  const env = { TOKEN: "tok", HOOKS_TOKEN: "hook" };

  it("reads to the same config as the JSON5 text, with the same ${NAME} substitution", () => {
    const fromYaml = parseConfig(YAML_CONFIG, { env, format: "yaml" });
    expect(fromYaml).toEqual(parseConfig(JSON5_CONFIG, { env }));
    expect(fromYaml.gateway.auth.token).toBe("tok");
    expect(fromYaml.gateway.auth).not.toHaveProperty("password");
    expect(Object.isFrozen(fromYaml.gateway)).toBe(true);
  });

  it("names an unset variable at its key path, as for JSON5", () => {
    expect(yamlIssues(YAML_CONFIG, { TOKEN: "tok" })).toEqual([
      { path: "hooks.token", message: "environment variable HOOKS_TOKEN is not set" },
    ]);
  });

  it("reports schema problems at their key paths; yes/no/on are strings, not booleans (YAML 1.2)", () => {
    const issues = yamlIssues("gateway:\n  port: '80'\n  prot: 1\nhooks:\n  enabled: yes\n");
    expect(issues.map((issue) => issue.path).sort()).toEqual(["gateway.port", "gateway.prot", "hooks.enabled"]);
    expect(issues.find((issue) => issue.path === "gateway.prot")?.message).toContain('did you mean "port"');
  });

  it("names the line, the column and the key of a syntax error", () => {
    expect(yamlIssues("gateway:\n  port: 1\n  port: 2\n")).toEqual([
      { path: "gateway.port", message: "YAML syntax error at line 3, column 3: Map keys must be unique" },
    ]);
    const [unclosed] = yamlIssues('gateway:\n  auth:\n    token: "abc\n  port: 1\n');
    expect(unclosed).toEqual({
      path: "gateway.auth.token",
      message: expect.stringMatching(/^YAML syntax error at line 5, column 1: Missing closing "quote/),
    });
    const [indent] = yamlIssues("agents:\n  list:\n    - id: a\n     name: A\n");
    expect(indent?.path).toBe("agents.list[0]");
    expect(indent?.message).toBe("YAML syntax error at line 4, column 1: Sequence item without - indicator");
    expect(yamlIssues("\tgateway: {}\n")).toEqual([
      { path: "", message: "YAML syntax error at line 1, column 1: Tabs are not allowed as indentation" },
    ]);
  });

  it("refuses what would otherwise pass silently: unknown tags, several documents, unknown aliases", () => {
    expect(yamlIssues("gateway:\n  bind: !ip 127.0.0.1\n")).toEqual([
      { path: "gateway.bind", message: "YAML syntax error at line 2, column 9: Unresolved tag: !ip" },
    ]);
    expect(yamlIssues("gateway: {}\n---\nhooks: {}\n")[0]?.message).toMatch(/^YAML syntax error at line 2, column 1: .*multiple documents/);
    expect(yamlIssues("gateway:\n  bind: *addr\n")[0]?.message).toMatch(/^YAML error: Unresolved alias/);
  });

  it("accepts anchors and aliases", () => {
    const config = parseConfig("channels:\n  a: &tg {kind: telegram, botToken: x}\n  b: *tg\n", { env: {}, format: "yaml" });
    expect(config.channels.b).toEqual({ kind: "telegram", botToken: "x" });
  });

  it("wants a mapping at the top level, and keeps __proto__ a plain unknown key", () => {
    expect(yamlIssues("")).toEqual([{ path: "", message: "expected an object at the top level" }]);
    expect(yamlIssues("- gateway\n")).toEqual([{ path: "", message: "expected an object at the top level" }]);
    expect(yamlIssues("__proto__:\n  polluted: true\n")).toEqual([
      { path: "__proto__", message: expect.stringMatching(/^unknown key/) },
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("loadConfigFile with YAML", () => {
  const dir = mkdtempSync(join(tmpdir(), "gw-config-yaml-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads .yaml and .yml files as YAML, naming the file in errors", () => {
    for (const name of ["gw.yaml", "gw.YML"]) {
      const path = join(dir, name);
      writeFileSync(path, "gateway:\n  port: 1234 # a comment\n");
      expect(loadConfigFile(path, { env: {} }).gateway.port).toBe(1234);
    }
    const bad = join(dir, "bad.yml");
    writeFileSync(bad, "gateway:\n  port: [\n");
    expect(() => loadConfigFile(bad, { env: {} })).toThrow(expect.objectContaining({ source: bad }));
    expect(() => loadConfigFile(bad, { env: {} })).toThrow(/YAML syntax error at line \d+, column \d+/);
  });
});
