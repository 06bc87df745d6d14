import { describe, expect, it } from "vitest";
import { ConfigError, type ConfigIssue, gatewayConfigSchema, parseConfig } from "./index.js";

function issuesOf(text: string): ConfigIssue[] {
  try {
    parseConfig(text, { env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

const agent = (id: string, model = "builtin/echo") => `{ id: "${id}", name: "${id}", model: "${model}" }`;

describe("agents", () => {
  it("rejects a duplicate agent id at the second occurrence", () => {
    expect(issuesOf(`{ agents: { list: [${agent("main")}, ${agent("b")}, ${agent("main")}] } }`)).toEqual([
      { path: "agents.list[2].id", message: 'duplicate agent id "main"' },
    ]);
  });

  it("requires agents.default to name a listed agent", () => {
    expect(issuesOf(`{ agents: { default: "ghost", list: [${agent("main")}] } }`)).toEqual([
      { path: "agents.default", message: '"ghost" is not an agent in agents.list (known: main)' },
    ]);
  });

  it("requires each model's provider to be builtin or configured", () => {
    expect(issuesOf(`{ agents: { list: [${agent("main")}, ${agent("b", "openai/gpt-4o")}] } }`)).toEqual([
      { path: "agents.list[1].model", message: 'unknown model provider "openai" (known: builtin)' },
    ]);
    const ok = parseConfig(
      `{ models: { providers: { openai: { kind: "openai", baseUrl: "http://127.0.0.1:1/v1" } } },
         agents: { list: [${agent("main", "openai/gpt-4o")}] } }`,
      { env: {} },
    );
    expect(ok.agents.list[0]?.model).toBe("openai/gpt-4o");
  });

  it("takes an ordered fallback chain as a list (or its one-string form), each provider checked", () => {
    const providers = `models: { providers: { a: { kind: "openai", baseUrl: "http://127.0.0.1:1/v1" } } }`;
    const chain = parseConfig(`{ ${providers}, agents: { list: [{ id: "main", name: "M", model: ["a/x", "builtin/echo"] }] } }`, { env: {} });
    expect(chain.agents.list[0]?.model).toBe("a/x,builtin/echo");
    expect(issuesOf(`{ ${providers}, agents: { list: [{ id: "main", name: "M", model: ["a/x", "b/y"] }] } }`)).toEqual([
      { path: "agents.list[0].model", message: 'unknown model provider "b" (known: builtin, a)' },
    ]);
    expect(issuesOf(`{ agents: { list: [{ id: "main", name: "M", model: [] }] } }`)).toEqual([
      { path: "agents.list[0].model", message: "must list at least one model" },
    ]);
    expect(issuesOf(`{ agents: { list: [{ id: "main", name: "M", model: ["builtin/echo", "echo"] }] } }`)[0]?.path).toBe(
      "agents.list[0].model[1]",
    );
  });

  it("checks the id pattern, the model reference format and the avatar URL", () => {
    const issues = issuesOf(
      `{ agents: { default: "Main", list: [{ id: "Main", name: "M", model: "echo", avatar: "not a url" }] } }`,
    );
    expect(issues.map((issue) => issue.path)).toEqual(
      expect.arrayContaining(["agents.list[0].id", "agents.list[0].model", "agents.list[0].avatar"]),
    );
    expect(issues.find((issue) => issue.path === "agents.list[0].model")?.message).toBe(
      'expected "<provider>/<model>"',
    );
  });

  it("rejects an empty agent list", () => {
    expect(issuesOf(`{ agents: { list: [] } }`)).toContainEqual({
      path: "agents.list",
      message: "must list at least one agent",
    });
  });
});

describe("models", () => {
  it("takes several API keys as apiKeys, but not beside apiKey", () => {
    const keys = parseConfig(`{ models: { providers: { p: { kind: "openai", baseUrl: "http://x", apiKeys: ["k1", "k2"] } } } }`, { env: {} });
    expect(keys.models.providers.p?.apiKeys).toEqual(["k1", "k2"]);
    expect(issuesOf(`{ models: { providers: { p: { kind: "openai", baseUrl: "http://x", apiKey: "k", apiKeys: ["k1"] } } } }`)).toEqual([
      { path: "models.providers.p.apiKeys", message: "set apiKey or apiKeys, not both" },
    ]);
    expect(issuesOf(`{ models: { providers: { p: { kind: "openai", baseUrl: "http://x", apiKeys: [] } } } }`)).toEqual([
      { path: "models.providers.p.apiKeys", message: "must list at least one key" },
    ]);
  });

  it("does not let builtin be redefined", () => {
    expect(
      issuesOf(`{ models: { providers: { builtin: { kind: "openai", baseUrl: "http://x" } } } }`),
    ).toEqual([{ path: "models.providers.builtin", message: '"builtin" is reserved' }]);
  });

  it("validates provider kind and base URL", () => {
    const issues = issuesOf(`{ models: { providers: { p: { kind: "cohere", baseUrl: "localhost:80" } } } }`);
    expect(issues.map((issue) => issue.path)).toEqual([
      "models.providers.p.kind",
      "models.providers.p.baseUrl",
    ]);
  });
});

describe("hooks", () => {
  it("requires a token when hooks are enabled", () => {
    expect(issuesOf(`{ hooks: { enabled: true } }`)).toEqual([
      { path: "hooks.token", message: "is required when hooks.enabled is true" },
    ]);
    expect(parseConfig(`{ hooks: { enabled: true, token: "h" } }`, { env: {} }).hooks.token).toBe("h");
  });

  it("checks mapping kinds, paths, and actions against agents and channels", () => {
    expect(issuesOf(`{ hooks: { mappings: [{ path: "gh", action: { kind: "fly" } }] } }`)).toEqual([
      { path: "hooks.mappings[0].action.kind", message: 'Invalid option: expected one of "agent"|"wake"' },
    ]);
    expect(issuesOf(`{ hooks: { mappings: [{ path: "gh", action: {} }] } }`)).toEqual([
      { path: "hooks.mappings[0].action.kind", message: 'is required (expected one of "agent"|"wake")' },
    ]);
    const issues = issuesOf(`{ hooks: { mappings: [
      { path: "gh", action: { kind: "agent" } },
      { path: "wake", action: { kind: "wake" } },
      { path: "gh", action: { kind: "wake" } },
    ] } }`);
    expect(issues).toEqual([
      { path: "hooks.mappings[1].path", message: '"wake" is already used by a built-in hook endpoint' },
      { path: "hooks.mappings[2].path", message: '"gh" is already used by another mapping' },
    ]);
    expect(
      issuesOf(
        `{ hooks: { mappings: [{ path: "gh", action: { kind: "agent", agentId: "x", channel: "tg" } }] } }`,
      ),
    ).toEqual([
      { path: "hooks.mappings[0].action.agentId", message: '"x" is not an agent in agents.list' },
      { path: "hooks.mappings[0].action.channel", message: '"tg" is not a configured channel' },
    ]);
  });
});

describe("hooks: main session, heartbeat, mapping actions", () => {
  it("defaults deliver to true only when the action names a destination", () => {
    const config = parseConfig(
      `{ channels: { tg: { kind: "telegram" } }, hooks: { mappings: [
        { path: "a", action: { kind: "agent" } },
        { path: "b", action: { kind: "agent", channel: "tg", to: "@ops" } },
        { path: "c", action: { kind: "agent", to: "@ops", deliver: false } },
        { path: "d", action: { kind: "wake", message: "m" } },
      ] } }`,
      { env: {} },
    );
    expect(config.hooks.mappings.map((m) => [m.action.deliver, m.action.wakeMode])).toEqual([
      [false, "now"],
      [true, "now"],
      [false, "now"],
      [false, "now"],
    ]);
  });

  it("refuses deliver without a destination and agent-only keys on wake actions", () => {
    expect(issuesOf(`{ hooks: { mappings: [{ path: "a", action: { kind: "agent", deliver: true } }] } }`)).toEqual([
      { path: "hooks.mappings[0].action.deliver", message: "deliver needs a destination: set to (and channel), or a channel's sessionKey" },
    ]);
    expect(issuesOf(`{ hooks: { mappings: [{ path: "a", action: { kind: "wake", to: "@x", name: "n" } }] } }`)).toEqual([
      { path: "hooks.mappings[0].action.to", message: 'applies to kind "agent" only' },
      { path: "hooks.mappings[0].action.name", message: 'applies to kind "agent" only' },
    ]);
  });

  it("checks idempotency fields, the main session key, the heartbeat channel and the body limit", () => {
    expect(issuesOf(`{ hooks: { mappings: [{ path: "a", idempotencyField: "body.id", action: { kind: "wake" } }] } }`)).toEqual([
      {
        path: "hooks.mappings[0].idempotencyField",
        message: 'expected a path such as "headers.x-github-delivery" or "payload.delivery.id"',
      },
    ]);
    expect(issuesOf(`{ hooks: { mainSessionKey: "main" } }`)).toEqual([
      { path: "hooks.mainSessionKey", message: "session key must look like <prefix>:<identifier>" },
    ]);
    expect(issuesOf(`{ hooks: { heartbeat: { channel: "tg" } } }`)).toEqual([
      { path: "hooks.heartbeat.channel", message: '"tg" is not a configured channel' },
    ]);
    expect(issuesOf(`{ gateway: { limits: { maxBodyBytes: 1000 } }, hooks: { maxBodyBytes: 2000 } }`)).toEqual([
      { path: "hooks.maxBodyBytes", message: "must not exceed gateway.limits.maxBodyBytes (1000)" },
    ]);
    const ok = parseConfig(
      `{ hooks: { mappings: [{ path: "gh", idempotencyField: "payload.commits[0].id", action: { kind: "wake" } }] } }`,
      { env: {} },
    );
    expect(ok.hooks.mappings[0]!.idempotencyField).toBe("payload.commits[0].id");
  });
});

describe("channels", () => {
  it("requires channels.default to name a configured channel", () => {
    expect(issuesOf(`{ channels: { default: "slack", tg: { kind: "telegram" } } }`)).toEqual([
      { path: "channels.default", message: '"slack" is not a configured channel' },
    ]);
  });

  it("requires lowercase channel ids and a kind", () => {
    expect(issuesOf(`{ channels: { Tele: { kind: "telegram" } } }`).map((issue) => issue.path)).toEqual([
      "channels.Tele",
    ]);
    expect(issuesOf(`{ channels: { sl: { token: "x" } } }`)).toEqual([
      { path: "channels.sl.kind", message: "is required (expected string)" },
    ]);
  });
});

describe("gateway", () => {
  it("validates trusted proxies as IPs or CIDR ranges", () => {
    const ok = parseConfig(
      `{ gateway: { trustedProxies: ["10.0.0.0/8", "192.168.1.7", "::1", "fd00::/8"] } }`,
      {
        env: {},
      },
    );
    expect(ok.gateway.trustedProxies).toHaveLength(4);
    const issues = issuesOf(
      `{ gateway: { trustedProxies: ["10.0.0.0/33", "example.org", "10.0.0.0/", "fd00::/129"] } }`,
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      "gateway.trustedProxies[0]",
      "gateway.trustedProxies[1]",
      "gateway.trustedProxies[2]",
      "gateway.trustedProxies[3]",
    ]);
  });

  it("takes browser origins as scheme, host and port only", () => {
    const ok = parseConfig(
      `{ gateway: { allowedOrigins: ["https://app.example.org", "HTTP://LOCALHOST:5173", "https://x.example/"] } }`,
      { env: {} },
    );
    expect(ok.gateway.allowedOrigins).toEqual(["https://app.example.org", "http://localhost:5173", "https://x.example"]);
    const issues = issuesOf(
      `{ gateway: { allowedOrigins: ["null", "*", "https://a.example/path", "ftp://a.example", "http://a.example:80"] } }`,
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      "gateway.allowedOrigins[0]",
      "gateway.allowedOrigins[1]",
      "gateway.allowedOrigins[2]",
      "gateway.allowedOrigins[3]",
      "gateway.allowedOrigins[4]",
    ]);
  });

  it("requires a proxy allow-list when trusted-proxy auth is on, and lowercases the header", () => {
    expect(issuesOf(`{ gateway: { auth: { trustedProxy: { enabled: true } } } }`)).toEqual([
      {
        path: "gateway.trustedProxies",
        message: "must list at least one proxy address when gateway.auth.trustedProxy.enabled is true",
      },
    ]);
    const config = parseConfig(
      `{ gateway: { trustedProxies: ["10.0.0.1"], auth: { trustedProxy: { enabled: true, header: "X-Remote-User" } } } }`,
      { env: {} },
    );
    expect(config.gateway.auth.trustedProxy.header).toBe("x-remote-user");
  });

  it("limits the roles of identity-authenticated users only when told, and names bad roles by key path", () => {
    const config = parseConfig(
      `{ gateway: { trustedProxies: ["10.0.0.1"], overlay: { mode: "enabled", roles: ["webchat"] },
         auth: { trustedProxy: { enabled: true, roles: ["webchat", "node"], controlUsers: [" ops@example.org "] } } } }`,
      { env: {} },
    );
    expect(config.gateway.auth.trustedProxy).toMatchObject({ roles: ["webchat", "node"], controlUsers: ["ops@example.org"] });
    expect(config.gateway.overlay).toMatchObject({ roles: ["webchat"], controlUsers: [] });
    expect(issuesOf(`{ gateway: { overlay: { roles: ["admin"], controlUsers: [""] } } }`)).toEqual([
      { path: "gateway.overlay.roles[0]", message: "expected control, node or webchat" },
      { path: "gateway.overlay.controlUsers[0]", message: "expected a user name" },
    ]);
  });

  it("bounds ports and checks ops values", () => {
    const issues = issuesOf(`{ gateway: { port: 65536 }, ops: { healthPort: 1.5, logLevel: "verbose" } }`);
    expect(issues.map((issue) => issue.path)).toEqual(["gateway.port", "ops.healthPort", "ops.logLevel"]);
  });

  it("leaves tracing off unless ops.tracing names an OTLP endpoint, and checks its values", () => {
    expect(parseConfig("{}", { env: {} }).ops.tracing).toBeUndefined();
    const on = parseConfig(`{ ops: { tracing: { otlpEndpoint: "http://127.0.0.1:4318/v1/traces" } } }`, { env: {} });
    expect(on.ops.tracing).toEqual({ otlpEndpoint: "http://127.0.0.1:4318/v1/traces", serviceNamePrefix: "gateway-", sampleRatio: 1 });
    expect(issuesOf(`{ ops: { tracing: {} } }`).map((issue) => issue.path)).toEqual(["ops.tracing.otlpEndpoint"]);
    const bad = issuesOf(
      `{ ops: { tracing: { otlpEndpoint: "grpc://collector:4317", serviceNamePrefix: "a b", sampleRatio: 1.5, protocol: "grpc" } } }`,
    );
    expect(bad.map((issue) => issue.path).sort()).toEqual([
      "ops.tracing.otlpEndpoint",
      "ops.tracing.protocol",
      "ops.tracing.sampleRatio",
      "ops.tracing.serviceNamePrefix",
    ]);
    expect(bad.find((issue) => issue.path === "ops.tracing.otlpEndpoint")?.message).toMatch(/OTLP\/HTTP traces endpoint/);
  });
});

describe("runner.tools.mcp", () => {
  const mcp = (servers: string) => `{ runner: { tools: { mcp: { servers: ${servers} } } } }`;

  it("takes a stdio server and an HTTP server, with defaults", () => {
    const config = parseConfig(mcp(`{ fs: { command: "npx", args: ["-y", "x"] }, web: { url: "https://mcp.example.com/mcp", headers: { A: "b" } } }`), { env: {} });
    expect(config.runner.tools.mcp.servers.fs).toMatchObject({ command: "npx", env: {}, timeoutMs: 30_000, allowTools: ["*"], denyTools: [] });
    expect(config.runner.tools.mcp.servers.web).toMatchObject({ url: "https://mcp.example.com/mcp", allowHosts: [] });
  });

  it.each([
    [`{ x: {} }`, "runner.tools.mcp.servers.x", "set either command (stdio) or url"],
    [`{ x: { command: "a", url: "https://h/" } }`, "runner.tools.mcp.servers.x", "set either command (stdio) or url"],
    [`{ time: { command: "a" } }`, "runner.tools.mcp.servers", "built-in tools"],
    [`{ "Bad.Id": { command: "a" } }`, "runner.tools.mcp.servers", "lowercase"],
    [`{ x: { command: "a", headers: { A: "b" } } }`, "runner.tools.mcp.servers.x.headers", "only to url servers"],
    [`{ x: { url: "https://h/", env: { A: "b" } } }`, "runner.tools.mcp.servers.x.env", "only to command servers"],
    [`{ x: { url: "ftp://h/" } }`, "runner.tools.mcp.servers.x.url", "http(s) URL"],
    [`{ x: { command: "a", env: { "1A": "b" } } }`, "runner.tools.mcp.servers.x.env", "environment variable name"],
  ])("refuses %s at %s", (servers, path, message) => {
    const issues = issuesOf(mcp(servers));
    expect(issues).toContainEqual(expect.objectContaining({ path: expect.stringContaining(path), message: expect.stringContaining(message) }));
  });
});

describe("nats and redis", () => {
  it("bounds nats.replicas", () => {
    expect(parseConfig(`{ nats: { replicas: 3 } }`, { env: {} }).nats.replicas).toBe(3);
    expect(issuesOf(`{ nats: { replicas: 0 } }`).map((issue) => issue.path)).toEqual(["nats.replicas"]);
    expect(issuesOf(`{ nats: { replicas: 7 } }`).map((issue) => issue.path)).toEqual(["nats.replicas"]);
  });

  it("takes either one Redis URL or cluster nodes sharing scheme and credentials", () => {
    const nodes = `["redis://:pw@10.0.0.1:6379", "redis://:pw@10.0.0.2:6379"]`;
    expect(parseConfig(`{ redis: { nodes: ${nodes} } }`, { env: {} }).redis.nodes).toHaveLength(2);
    expect(issuesOf(`{ redis: { url: "redis://10.0.0.9:6379", nodes: ${nodes} } }`).map((i) => i.path)).toEqual(["redis.nodes"]);
    const mixed = issuesOf(`{ redis: { nodes: ["redis://:pw@10.0.0.1:6379", "rediss://:pw@10.0.0.2:6379", "redis://:x@10.0.0.3:6379"] } }`);
    expect(mixed.map((issue) => issue.path)).toEqual(["redis.nodes[1]", "redis.nodes[2]"]);
    expect(issuesOf(`{ redis: { nodes: ["http://10.0.0.1"] } }`).map((issue) => issue.path)).toEqual(["redis.nodes[0]"]);
  });

  it("refuses braces in redis.keyPrefix, which would pin every key to one cluster slot", () => {
    expect(issuesOf(`{ redis: { keyPrefix: "{gw}:" } }`).map((issue) => issue.path)).toEqual(["redis.keyPrefix"]);
  });
});

describe("gatewayConfigSchema", () => {
  it("is usable directly and reports raw zod issues", () => {
    expect(gatewayConfigSchema().safeParse({}).success).toBe(true);
    expect(gatewayConfigSchema().safeParse({ nats: { url: "http://x" } }).success).toBe(false);
  });
});
