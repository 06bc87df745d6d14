import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, type ConfigIssue, defaultConfig, loadConfigFile, parseConfig } from "./index.js";

function issuesOf(text: string, env: Record<string, string | undefined> = {}): ConfigIssue[] {
  try {
    parseConfig(text, { env });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("defaults", () => {
  it("an empty file yields the no-file config: loopback, one builtin echo agent, nothing optional started", () => {
    const config = parseConfig("{}", { env: {} });
    expect(config).toEqual(defaultConfig());
    expect(config.gateway).toMatchObject({
      bind: "127.0.0.1",
      port: 18789,
      dataDir: "./data",
      trustedProxies: [],
      allowedOrigins: [],
    });
    expect(config.gateway.auth).toEqual({
      allowLoopback: true,
      trustedProxy: { enabled: false, header: "x-forwarded-user", roles: ["control", "node", "webchat"], controlUsers: [] },
    });
    expect(config.gateway.overlay).toEqual({ mode: "disabled", roles: ["control", "node", "webchat"], controlUsers: [] });
    expect(config.gateway.limits).toEqual({
      maxFrameBytes: 1_048_576,
      maxBodyBytes: 1_048_576,
      failedAuthMax: 20,
      failedAuthWindowSeconds: 60,
      requestTimeoutMs: 15_000,
      preConnectTimeoutMs: 10_000,
      maxConnectionsPerIp: 256,
      maxInFlightPerConnection: 64,
      maxSubscriptionsPerConnection: 256,
      maxSendBufferBytes: 4_194_304,
      httpRequestTimeoutMs: 30_000,
    });
    expect(config.hooks).toEqual({
      enabled: false,
      path: "/hooks",
      maxBodyBytes: 262_144,
      mainSessionKey: "hook:main",
      heartbeat: { intervalSeconds: 1_800, maxEventsPerTurn: 100 },
      idempotencyWindowSeconds: 86_400,
      mappings: [],
    });
    expect(config.agents).toEqual({
      default: "main",
      list: [
        {
          id: "main",
          name: "Main",
          model: "builtin/echo",
          description: "Echoes your message back (offline builtin model)",
          avatar: "",
          tools: [],
        },
      ],
    });
    expect(config.models.providers).toEqual({});
    expect(config.channels).toEqual({});
    expect(config.nats).toEqual({ url: "nats://127.0.0.1:4222", subjectPrefix: "gw", replicas: 1, runEventPartitions: 1 });
    expect(config.redis).toEqual({ url: "redis://127.0.0.1:6379", nodes: [], keyPrefix: "gw:" });
    expect(config.ops).toEqual({ shutdownTimeoutMs: 10_000, logLevel: "info", accessLog: true });
  });

  it("fills defaults inside partially given sections and agent entries", () => {
    const config = parseConfig(
      `{ gateway: { auth: { token: "t" } }, agents: { default: "a", list: [{ id: "a", name: "A", model: "builtin/echo" }] } }`,
      { env: {} },
    );
    expect(config.gateway.auth).toEqual({
      token: "t",
      allowLoopback: true,
      trustedProxy: { enabled: false, header: "x-forwarded-user", roles: ["control", "node", "webchat"], controlUsers: [] },
    });
    expect(config.agents.list[0]).toEqual({
      id: "a",
      name: "A",
      model: "builtin/echo",
      description: "",
      avatar: "",
      tools: [],
    });
  });

  it("defaultConfig applies overrides and still validates them", () => {
    const config = defaultConfig({ gateway: { port: 0, auth: { token: "x" } }, ops: { healthPort: 0 } });
    expect(config.gateway.port).toBe(0);
    expect(config.gateway.bind).toBe("127.0.0.1");
    expect(config.gateway.auth.token).toBe("x");
    expect(config.ops.healthPort).toBe(0);
    expect(() => defaultConfig({ gateway: { port: 70_000 } })).toThrow(/gateway\.port/);
  });
});

describe("errors", () => {
  it("reports a JSON5 syntax error with line and column", () => {
    const issues = issuesOf("{\n  gateway: { port: 1 }\n  oops: 2\n}");
    expect(issues).toEqual([
      { path: "", message: "JSON5 syntax error at line 3, column 3: invalid character 'o'" },
    ]);
  });

  it("rejects a top level that is not an object", () => {
    expect(issuesOf("[1, 2]")).toEqual([{ path: "", message: "expected an object at the top level" }]);
  });

  it("rejects unknown keys at every known level, naming the key and suggesting the likely one", () => {
    const issues = issuesOf(
      `{ gatway: {}, gateway: { prot: 1, auth: { tokne: "x" } }, hooks: { mappings: [{ path: "a", action: { kind: "wake", chanel: "x" } }] } }`,
    );
    const byPath = Object.fromEntries(issues.map((issue) => [issue.path, issue.message]));
    expect(Object.keys(byPath).sort()).toEqual([
      "gateway.auth.tokne",
      "gateway.prot",
      "gatway",
      "hooks.mappings[0].action.chanel",
    ]);
    expect(byPath["gateway.prot"]).toMatch(
      /^unknown key \(did you mean "port"\?\); expected one of: bind, port/,
    );
    expect(byPath["gateway.auth.tokne"]).toContain('did you mean "token"');
    expect(byPath.gatway).toContain('did you mean "gateway"');
  });

  it("accepts unknown keys inside a channel, which belong to its plugin", () => {
    const config = parseConfig(
      `{ channels: { tg: { kind: "telegram", botToken: "b", anything: { nested: 1 } } } }`,
      {
        env: {},
      },
    );
    expect(config.channels.tg).toEqual({ kind: "telegram", botToken: "b", anything: { nested: 1 } });
  });

  it("names the path and the expectation of wrong types and missing keys", () => {
    const issues = issuesOf(
      `{ gateway: { port: "80" }, agents: { list: [{ id: "a", model: "builtin/echo" }] } }`,
    );
    expect(issues).toContainEqual({
      path: "gateway.port",
      message: "Invalid input: expected number, received string",
    });
    expect(issues).toContainEqual({ path: "agents.list[0].name", message: "is required (expected string)" });
  });

  it("lists every issue in the message as 'path: message' and keeps the source", () => {
    let error: unknown;
    try {
      parseConfig(`{ gateway: { port: -1, overlay: { mode: "on" } } }`, { env: {}, source: "gw.json5" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message, source, issues } = error as ConfigError;
    expect(source).toBe("gw.json5");
    expect(issues.map((issue) => issue.path)).toEqual(["gateway.port", "gateway.overlay.mode"]);
    expect(message).toContain("gw.json5");
    expect(message).toContain("gateway.port: Too small");
    expect(message).toContain(
      'gateway.overlay.mode: Invalid option: expected one of "enabled"|"require"|"disabled"',
    );
  });
});

describe("result", () => {
  it("is deeply frozen", () => {
    const config = parseConfig(`{ gateway: { trustedProxies: ["10.0.0.1"] } }`, { env: {} });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.gateway.auth.trustedProxy)).toBe(true);
    expect(Object.isFrozen(config.gateway.trustedProxies)).toBe(true);
    expect(Object.isFrozen(config.agents.list[0])).toBe(true);
    expect(() => {
      (config.gateway as { port: number }).port = 1;
    }).toThrow(TypeError);
  });
});

describe("loadConfigFile", () => {
  const dir = mkdtempSync(join(tmpdir(), "gw-config-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads and validates a file, naming it as the source of errors", () => {
    const path = join(dir, "ok.json5");
    writeFileSync(path, `// comment\n{ gateway: { port: 1234, }, }`);
    expect(loadConfigFile(path, { env: {} }).gateway.port).toBe(1234);

    const bad = join(dir, "bad.json5");
    writeFileSync(bad, `{ gateway: { port: "x" } }`);
    expect(() => loadConfigFile(bad, { env: {} })).toThrow(expect.objectContaining({ source: bad }));
  });

  it("fails with a ConfigError naming a missing file", () => {
    const path = join(dir, "missing.json5");
    expect(() => loadConfigFile(path, { env: {} })).toThrow(ConfigError);
    expect(() => loadConfigFile(path, { env: {} })).toThrow(`config file not found: ${path}`);
  });
});
