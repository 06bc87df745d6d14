import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectRun, runModels, send, shape } from "./fixtures/agent-runs.js";
import { AGENTS, type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

interface ToolBody {
  ok?: boolean;
  result: Record<string, unknown> & { content: string };
  error?: { type: string; message: string };
}

describe.each(MODES)("POST /api/tools/invoke (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  let control: WsClient;
  let target: Server;
  let targetUrl: string;
  const invoke = (body: unknown) =>
    fetch(`${gw.httpUrl()}/api/tools/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    target = createServer((_req, res) => res.end("x".repeat(5_000)));
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.2", resolve));
    targetUrl = `http://localhost:${(target.address() as AddressInfo).port}/page`;
    fake = await startFakeModelServer();
    gw = await startGateway(mode, {
      runner: { maxToolResultBytes: 1_500, tools: { httpFetch: { allowHosts: ["127.0.0.2"], maxBytes: 4_000 } } },
      agents: [...AGENTS, { id: "lister", name: "Lister", model: "fake-openai/gpt-test", tools: ["sessions.list"] }],
      models: runModels(fake),
    });
    control = await WsClient.open(gw.wsUrl());
    expect((await control.connect(TOKEN, "control")).ok).toBe(true);
  });
  afterAll(async () => {
    control?.close();
    await gw?.stop();
    await fake?.close();
    await new Promise((resolve) => target?.close(resolve));
  });

  it("runs time.now", async () => {
    const res = await invoke({ tool: "time.now", params: { timezone: "Europe/Berlin" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, result: { content: expect.any(String), timezone: "Europe/Berlin", epochMs: expect.any(Number) } });
  });

  it("refuses an unknown tool and bad params with 400 invalid_request_error", async () => {
    const unknown = await invoke({ tool: "no.such.tool" });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: { type: "invalid_request_error", message: "unknown tool: no.such.tool" } });
    const bad = await invoke({ tool: "time.now", params: { timezone: 42 } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringContaining("params.timezone") } });
    const missing = await invoke({ params: {} });
    expect(missing.status).toBe(400);
  });

  it("http.fetch refuses loopback targets unless the host is allowed, and caps the size twice: download, then result", async () => {
    const refused = await invoke({ tool: "http.fetch", params: { url: targetUrl } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/non-public address/);
    const allowedUrl = targetUrl.replace("localhost", "127.0.0.2");
    const allowed = await invoke({ tool: "http.fetch", params: { url: allowedUrl } });
    expect(allowed.status).toBe(200);
    const body = (await allowed.json()) as { result: { content: string; truncated: boolean; status: number } };
    expect(body.result).toMatchObject({ status: 200, truncated: true });
    // 4,000 bytes downloaded (tools.httpFetch.maxBytes), then cut so the result's JSON fits
    // runner.maxToolResultBytes, with a note the model reads.
    expect(Buffer.byteLength(JSON.stringify(body.result))).toBeLessThanOrEqual(1_500);
    expect(body.result.content).toMatch(/^x{1000,}\n\[truncated by the gateway: the result was 4\d{3} bytes, the limit is 1500\]$/);
  });

  /** A builtin/echo exchange on a new session of agent `ops`, so the session exists with 2 messages. */
  const newSession = async (prefix: string) => {
    const key = `${prefix}:${randomUUID().slice(0, 8)}`;
    const res = await control.request("agent", { message: `hello from ${key}`, sessionKey: key, agentId: "ops" });
    expect(res.ok).toBe(true);
    return key;
  };

  it("sessions.list and sessions.preview list and preview the sessions made earlier", async () => {
    const keys = [await newSession("tools"), await newSession("tools")];
    const listed = await invoke({ tool: "sessions.list", params: { agentId: "ops", limit: 500 } });
    expect(listed.status).toBe(200);
    const list = ((await listed.json()) as ToolBody).result;
    const sessions = list.sessions as Array<Record<string, unknown>>;
    expect(sessions.slice(0, 2).map((s) => s.key)).toEqual([...keys].reverse());
    expect(sessions[0]).toMatchObject({ key: keys[1], agentId: "ops", model: "builtin/echo", messageCount: 2 });
    expect(list.total).toBe(sessions.length);
    expect(JSON.parse(list.content)).toEqual({ sessions, total: list.total });
    const page = ((await (await invoke({ tool: "sessions.list", params: { agentId: "ops", limit: 1, offset: 1 } })).json()) as ToolBody).result;
    expect((page.sessions as Array<{ key: string }>).map((s) => s.key)).toEqual([keys[0]]);

    const previewed = await invoke({ tool: "sessions.preview", params: { key: keys[0], limit: 1 } });
    expect(previewed.status).toBe(200);
    const preview = ((await previewed.json()) as ToolBody).result;
    expect(preview).toMatchObject({ key: keys[0], agentId: "ops", messageCount: 2 });
    expect(preview.messages).toEqual([
      expect.objectContaining({ type: "message", role: "assistant", sender: "Ops", body: `hello from ${keys[0]}` }),
    ]);
    expect(JSON.parse(preview.content)).toMatchObject({ key: keys[0], messages: preview.messages });
  });

  it("sessions.* tools refuse bad params with 400 and an unknown session with 404", async () => {
    const cases = [
      [{ tool: "sessions.list", params: { limit: 0 } }, /^params\.limit: /],
      [{ tool: "sessions.list", params: { offset: -1 } }, /^params\.offset: /],
      [{ tool: "sessions.preview", params: {} }, /^params\.key: /],
      [{ tool: "sessions.preview", params: { key: "nocolon" } }, /^params\.key: /],
      [{ tool: "sessions.preview", params: { key: "tools:x", limit: 201 } }, /^params\.limit: /],
    ] as const;
    for (const [body, message] of cases) {
      const res = await invoke(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as ToolBody).error).toMatchObject({ type: "invalid_request_error", message: expect.stringMatching(message) });
    }
    const missing = await invoke({ tool: "sessions.preview", params: { key: "tools:never-made" } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ToolBody).error?.message).toBe("unknown session: tools:never-made");
  });

  it("lets a model call sessions.list in a run, and only the tools its agent allows", async () => {
    const key = await newSession("tools");
    const runId = `lister-${mode}-${randomUUID().slice(0, 8)}`;
    const response = send(control, "agent", { message: "tools:sessions__list,sessions__preview please", sessionKey: `tools:${runId}`, agentId: "lister", runId });
    const events = await collectRun(control, runId);
    expect(shape(events)).toEqual([
      "lifecycle:start",
      "tool:start:call_1",
      "tool:result:call_1",
      "tool:start:call_2",
      "tool:error:call_2",
      "assistant",
      "lifecycle:end",
    ]);
    expect(events[1]!.data).toMatchObject({ name: "sessions.list", input: {} });
    const listed = events[2]!.data.result as { content: string; sessions: Array<{ key: string }>; total: number };
    expect(listed.sessions.map((s) => s.key)).toContain(key);
    expect(listed.total).toBeGreaterThanOrEqual(listed.sessions.length);
    expect(JSON.parse(listed.content)).toMatchObject({ total: listed.total });
    expect(events[4]!.data.error).toBe("tool sessions__preview is not available to this agent");
    expect((await response).payload).toMatchObject({ payloads: [{ type: "text", text: "Tools said: 2 results" }] });
    // The model saw the listing as the tool result.
    const replay = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(replay.find((m) => m.role === "tool")!.content).toContain(key);
  });
});
