import { isGatewayError } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { everythingMcpServer, type FakeMcpHttpServer, startFakeMcpHttpServer, waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolRegistry } from "../tool-registry.js";
import { McpServers } from "./mcp-servers.js";

const logger = createLogger({ service: "test", level: "silent" });
const base = { args: [], env: {}, headers: {}, allowHosts: [], timeoutMs: 10_000, allowTools: ["*"], denyTools: [] };
const ctx = () => ({ signal: AbortSignal.timeout(20_000), agentId: "main", sessionKey: "s" });
const fastRestart = { baseMs: 50, capMs: 200, jitter: "none" as const };

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isGatewayError(err)) throw new Error(`expected a GatewayError, got ${String(err)}`);
  return { code: err.code, message: err.message };
}

async function connected(servers: McpServers, id: string, minRestarts = 0) {
  return waitFor(
    () => {
      const s = servers.status().find((x) => x.id === id);
      return s?.state === "connected" && s.restarts >= minRestarts ? s : undefined;
    },
    { timeoutMs: 20_000, what: `MCP server ${id} connected` },
  );
}

describe("an MCP server over stdio", () => {
  const servers = new McpServers(
    {
      servers: {
        everything: { ...base, ...everythingMcpServer(), env: { GW_TEST_NAMED: "named-value" }, denyTools: ["get-sum", "toggle-*"] },
      },
    },
    { logger, backoff: fastRestart },
  );
  const registry = new ToolRegistry([servers]);
  beforeAll(async () => {
    process.env.GW_TEST_RUNNER_SECRET = "runner-secret";
    servers.start();
    await connected(servers, "everything");
  });
  afterAll(async () => {
    delete process.env.GW_TEST_RUNNER_SECRET;
    await servers.stop();
  });

  it("gives the child only the env its config names (and PATH, HOME...), not the runner's", async () => {
    const env = JSON.parse((await registry.invoke("everything.get-env", {}, ctx())).content) as Record<string, string>;
    expect(env.GW_TEST_NAMED).toBe("named-value");
    expect(env).not.toHaveProperty("GW_TEST_RUNNER_SECRET");
    expect(Object.keys(env).filter((k) => !["GW_TEST_NAMED", "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM"].includes(k))).toEqual([]);
  });

  it("neither lists nor runs a tool denyTools excludes", async () => {
    expect(registry.names()).toContain("everything.echo");
    expect(registry.names().filter((n) => n === "everything.get-sum" || n.startsWith("everything.toggle-"))).toEqual([]);
    expect(await failure(registry.invoke("everything.get-sum", { a: 1, b: 2 }, ctx()))).toMatchObject({ code: "INVALID_REQUEST" });
  });

  it("fails the call in flight when the server dies, as a tool error, and restarts it", async () => {
    const before = await connected(servers, "everything");
    const call = registry.invoke("everything.trigger-long-running-operation", { duration: 10, steps: 10 }, ctx());
    await new Promise((r) => setTimeout(r, 300));
    process.kill(before.pid!, "SIGKILL");
    expect(await failure(call)).toMatchObject({ code: "UNAVAILABLE", message: expect.stringContaining("everything") });
    const after = await connected(servers, "everything", before.restarts + 1);
    expect(after.pid).not.toBe(before.pid);
    expect((await registry.invoke("everything.echo", { message: "back" }, ctx())).content).toBe("Echo: back");
  });
});

describe("an MCP server over Streamable HTTP", () => {
  let fake: FakeMcpHttpServer;
  let servers: McpServers;
  let registry: ToolRegistry;
  beforeAll(async () => {
    fake = await startFakeMcpHttpServer();
    servers = new McpServers(
      {
        servers: {
          web: { ...base, url: fake.url, allowHosts: ["127.0.0.1"], headers: { authorization: "Bearer mcp-secret" }, timeoutMs: 500, allowTools: ["greet", "stall", "added-*"] },
          guarded: { ...base, url: fake.url },
        },
      },
      { logger, backoff: fastRestart },
    );
    registry = new ToolRegistry([servers]);
    servers.start();
    await connected(servers, "web");
  });
  afterAll(async () => {
    await servers?.stop();
    await fake?.close();
  });

  it("sends the configured headers", () => {
    expect(fake.headers.some((h) => h.authorization === "Bearer mcp-secret")).toBe(true);
  });

  it("offers only the tools allowTools matches", async () => {
    expect(registry.names()).toEqual(["web.greet", "web.stall"]);
    expect(await failure(registry.invoke("web.secret-op", {}, ctx()))).toMatchObject({ code: "INVALID_REQUEST", message: "unknown tool: web.secret-op" });
  });

  it("ends a call that outlives timeoutMs as TIMEOUT", async () => {
    expect(await failure(registry.invoke("web.stall", {}, ctx()))).toMatchObject({ code: "TIMEOUT", message: expect.stringContaining("500 ms") });
    expect((await registry.invoke("web.greet", { name: "still here" }, ctx())).content).toBe("Hello, still here!");
  });

  it("relists when the server says its tools changed", async () => {
    fake.addTool("added-later");
    await waitFor(() => (registry.names().includes("web.added-later") ? true : undefined), { what: "the new tool listed" });
    expect((await registry.invoke("web.added-later", {}, ctx())).content).toBe("added-later added");
  });

  it("refuses a loopback URL not listed in allowHosts (SSRF guard) and says why", async () => {
    const status = await waitFor(() => servers.status().find((s) => s.id === "guarded" && s.lastError !== undefined), { timeoutMs: 10_000 });
    expect(status.state).not.toBe("connected");
    expect(status.lastError).toMatch(/non-public address/);
    expect(status.tools).toEqual([]);
  });
});

describe("an MCP server's limits and logs", () => {
  let fake: FakeMcpHttpServer;
  let servers: McpServers;
  const lines: string[] = [];
  beforeAll(async () => {
    fake = await startFakeMcpHttpServer();
    const destination = { write: (line: string) => lines.push(line) } as unknown as NodeJS.WritableStream;
    servers = new McpServers(
      { servers: { small: { ...base, url: fake.url, allowHosts: ["127.0.0.1"], headers: { authorization: "Bearer logged-never" }, maxResultBytes: 200 } } },
      { logger: createLogger({ service: "test", level: "debug", destination }), backoff: fastRestart },
    );
    servers.start();
    await connected(servers, "small");
  });
  afterAll(async () => {
    await servers?.stop();
    await fake?.close();
  });

  it("cuts a result to the server's maxResultBytes, with the note", async () => {
    const result = await new ToolRegistry([servers]).invoke("small.greet", { name: "x".repeat(1_000) }, ctx());
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(200);
    expect(result).toMatchObject({ truncated: true, content: expect.stringMatching(/^Hello, x+\n\[truncated by the gateway/) });
  });

  it("logs arguments and results at debug with the configured secrets masked", async () => {
    await new ToolRegistry([servers]).invoke("small.greet", { name: "Bearer logged-never" }, ctx());
    const call = lines.find((l) => l.includes('"MCP tool call"') && l.includes("small.greet") && !l.includes("xxxx"));
    expect(call).toBeDefined();
    expect(JSON.parse(call!)).toMatchObject({ level: 20 });
    expect(lines.join("\n")).not.toContain("logged-never");
    expect(lines.some((l) => l.includes('"MCP tool result"'))).toBe(true);
  });
});
