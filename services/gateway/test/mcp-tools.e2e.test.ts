import {
  everythingMcpServer,
  type FakeMcpHttpServer,
  type FakeModelServer,
  startFakeMcpHttpServer,
  startFakeModelServer,
  waitFor,
} from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvent, assistantText, collectRun, runModels, send, waitRunEvent } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { runToExit } from "./fixtures/processes.js";
import { WsClient } from "./fixtures/ws-client.js";

interface McpStatus {
  id: string;
  state: string;
  tools: string[];
  restarts: number;
  pid?: number;
  lastError?: string;
}

/** An agent that may use the everything server's tools and two of the HTTP server's (not secret-op). */
const AGENTS = [
  { id: "main", name: "Main", model: "builtin/echo" },
  { id: "tooler", name: "Tool user", model: "fake-openai/gpt-test", tools: ["everything.*", "web.greet", "web.stall", "web.secret-op"] },
];

/**
 * MCP servers as agent tools, through the public surface: the MCP project's own "everything"
 * server from npm on stdio, and a Streamable HTTP server started here; a fake model that calls
 * their tools.
 */
describe.each(MODES)("MCP tools (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let model: FakeModelServer;
  let web: FakeMcpHttpServer;
  let control: WsClient;
  let runs = 0;

  async function status(): Promise<McpStatus[]> {
    const res = await control.request("tools.status", {});
    expect(res.ok).toBe(true);
    return (res.payload as { mcp: McpStatus[] }).mcp;
  }

  /** Waits for `id` to be connected; on a timeout the error names its last status (state, lastError, restarts). */
  const connected = (id: string, minRestarts = 0) =>
    waitFor(
      async () => {
        const found = (await status()).find((s) => s.id === id);
        if (found?.state === "connected" && found.restarts >= minRestarts) return found;
        throw new Error(`last status ${JSON.stringify(found)}`);
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `MCP server ${id} connected` },
    );

  /** One run of the tool agent on its own session: its events to the end. */
  async function run(message: string): Promise<AgentEvent[]> {
    const runId = `mcp-${mode}-${++runs}`;
    const accepted = await control.request("agent", { message, agentId: "tooler", sessionKey: `mcp:${runId}`, runId }, 30_000);
    expect(accepted.ok).toBe(true);
    return collectRun(control, runId, 30_000);
  }

  const invoke = (tool: string, params: Record<string, unknown>) =>
    fetch(`${gw.httpUrl()}/api/tools/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ tool, params }),
    });

  beforeAll(async () => {
    model = await startFakeModelServer();
    web = await startFakeMcpHttpServer();
    const servers = {
      everything: { ...everythingMcpServer(), timeoutMs: 15_000 },
      web: { url: web.url, allowHosts: ["127.0.0.1"], timeoutMs: 1_000, allowTools: ["greet", "stall"] },
    };
    gw = await startGateway(mode, { agents: AGENTS, models: runModels(model), runner: { tools: { mcp: { servers } } } });
    control = await WsClient.open(gw.wsUrl());
    expect((await control.connect(TOKEN)).ok).toBe(true);
    await connected("everything");
    await connected("web");
  });
  afterAll(async () => {
    control?.close();
    await gw?.stop();
    await web?.close();
    await model?.close();
  });

  it("runs MCP tools the model calls: results reach the answer and the tool events", async () => {
    const events = await run("quote tools:everything__echo,web__greet");
    expect(assistantText(events)).toBe("Tools said: Echo: hi from the model | Hello, Ada!");
    const tool = events.filter((e) => e.stream === "tool").map((e) => [e.data.phase, e.data.toolCallId, e.data.name ?? e.data.result]);
    expect(tool).toEqual([
      ["start", "call_1", "everything.echo"],
      ["result", "call_1", { content: "Echo: hi from the model" }],
      ["start", "call_2", "web.greet"],
      ["result", "call_2", { content: "Hello, Ada!" }],
    ]);
  });

  it("offers the model only the tools the agent names and the server's allowTools lets through", async () => {
    await run("tools offered? tools:everything__echo");
    const first = model.requests.find((r) => JSON.stringify(r.body.messages).includes("tools offered?"))!;
    const offered = (first.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(offered).toContain("everything__echo");
    expect(offered).toContain("web__greet");
    expect(offered).toContain("web__stall");
    // Named by the agent, but outside the server's allowTools: neither offered nor callable.
    expect(offered).not.toContain("web__secret-op");
    const events = await run("tools:web__secret-op");
    expect(events.find((e) => e.stream === "tool" && e.data.phase === "error")?.data.error).toMatch(/not available to this agent/);
    expect(web.headers.length).toBeGreaterThan(0);
  });

  it("tools.status and `gateway tools status` show each server connected with its tools", async () => {
    const servers = await status();
    expect(servers.find((s) => s.id === "web")).toMatchObject({ state: "connected", tools: ["web.greet", "web.stall"], restarts: 0 });
    expect(servers.find((s) => s.id === "everything")?.tools).toContain("everything.echo");
    const cli = await runToExit("services/gateway/src/cli.ts", ["tools", "status", "--url", gw.wsUrl()], { GATEWAY_TOKEN: TOKEN });
    expect(cli.code, cli.output).toBe(0);
    expect(cli.output).toMatch(/web\s+http\s+connected\s+2\s+0/);
    expect(cli.output).toMatch(/everything\s+stdio\s+connected/);
    expect(cli.output).toContain("time.now");
  });

  it("/api/tools/invoke runs an MCP tool by <server>.<tool>, and refuses one outside allowTools", async () => {
    const res = await invoke("everything.get-sum", { a: 2, b: 40 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: { content: string } }).result.content).toContain("42");
    const greet = await invoke("web.greet", { name: "Grace" });
    expect(await greet.json()).toEqual({ ok: true, result: { content: "Hello, Grace!" } });
    const secret = await invoke("web.secret-op", {});
    expect(secret.status).toBe(400);
    expect(JSON.stringify(await secret.json())).toContain("unknown tool: web.secret-op");
  });

  it("a hanging tool hits timeoutMs: a tool error the model reads, and the run goes on", async () => {
    const events = await run("tools:web__stall");
    expect(events.find((e) => e.stream === "tool" && e.data.phase === "error")?.data.error).toMatch(/no answer from MCP server web within 1000 ms/);
    expect(events.at(-1)?.data.phase).toBe("end");
    expect(assistantText(events)).toBe("Tools said: 1 results");
    expect((await invoke("web.stall", {})).status).toBe(504);
  });

  it("a server killed mid-run fails that call as a tool error; after its restart the next call works", async () => {
    const before = await connected("everything");
    const runId = `mcp-${mode}-${++runs}`;
    // The agent method answers when the run ends: send it and act while it runs.
    const answer = send(
      control,
      "agent",
      { message: "tools:everything__trigger-long-running-operation", agentId: "tooler", sessionKey: `mcp:${runId}`, runId },
      30_000,
    );
    const started = await waitRunEvent(control, runId, (e) => e.stream === "tool" && e.data.phase === "start", 20_000);
    expect(started.data.name).toBe("everything.trigger-long-running-operation");
    process.kill(before.pid!, "SIGKILL");
    expect((await answer).ok).toBe(true);
    const events = await collectRun(control, runId, 30_000);
    expect(events.find((e) => e.stream === "tool" && e.data.phase === "error")?.data.error).toMatch(/MCP server everything closed the connection/);
    expect(events.at(-1)?.data.phase).toBe("end");

    const after = await connected("everything", before.restarts + 1);
    expect(after.pid).not.toBe(before.pid);
    expect(assistantText(await run("quote again tools:everything__echo"))).toBe("Tools said: Echo: hi from the model");
  });
});
