import { randomUUID } from "node:crypto";
import { type FakeModelServer, freePort, startFakeModelServer, waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runModels } from "./fixtures/agent-runs.js";
import { AGENTS, type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { sessionLeftovers } from "./fixtures/session-storage.js";
import { type Frame, WsClient } from "./fixtures/ws-client.js";

/**
 * Every sessions.* method and error through the public WebSocket surface, in both modes.
 * Sessions get their history the way production does: `agent` runs (builtin/echo) append the
 * user message and the answer through the sessions service. Compaction summaries come from the
 * fake model server for agents on real models, and from the extractive summary otherwise.
 */
describe.each(MODES)("sessions over WebSocket (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  let control: WsClient;
  let device: WsClient;
  const clients: WsClient[] = [];
  const open = async (role = "control") => {
    const client = await WsClient.open(gw.wsUrl());
    clients.push(client);
    expect((await client.connect(TOKEN, role)).ok).toBe(true);
    return client;
  };
  const ok = async (client: WsClient, method: string, params: Record<string, unknown>) => {
    const res = await client.request(method, params);
    if (!res.ok) throw new Error(`${method} failed: ${JSON.stringify(res.error)}`);
    return res.payload!;
  };
  const errorOf = async (method: string, params: Record<string, unknown>, client = control) =>
    (await client.request(method, params)).error?.code;
  const say = (key: string, message: string, agentId?: string) =>
    ok(control, "agent", { message, sessionKey: key, ...(agentId ? { agentId } : {}) });
  const newKey = (prefix = "webchat") => `${prefix}:${randomUUID().slice(0, 8)}`;
  const sessionEvent = (client: WsClient, event: string, key: string, timeoutMs = 5_000) =>
    client.next((f: Frame) => f.event === event && (f.payload as { key?: string })?.key === key, timeoutMs);
  /** The run's `agent` event frames, whole, up to and including its lifecycle end or error. */
  const runFrames = async (client: WsClient, runId: unknown) => {
    const frames: Frame[] = [];
    for (;;) {
      const frame = await client.next((f) => f.event === "agent" && f.payload?.runId === runId);
      frames.push(frame);
      const { stream, data } = frame.payload as { stream: string; data: { phase?: string } };
      if (stream === "lifecycle" && (data.phase === "end" || data.phase === "error")) return frames;
    }
  };

  beforeAll(async () => {
    fake = await startFakeModelServer();
    const { providers } = runModels(fake);
    // "dead" answers nothing: a model provider that is down.
    const dead = { kind: "openai", baseUrl: `http://127.0.0.1:${await freePort()}/v1`, timeoutMs: 1_500 };
    gw = await startGateway(mode, {
      agents: [...AGENTS, { id: "oa", name: "OpenAI agent", model: "fake-openai/gpt-test" }],
      models: { providers: { ...providers, dead } },
    });
    control = await open("control");
    device = await open("node");
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
    await fake?.close();
  });

  it("creates a session on first use and emits session.created once, to control and watchers, events without id", async () => {
    const key = newKey();
    expect(await ok(device, "sessions.subscribe", { key })).toEqual({ subscribed: true, key });
    const { runId } = await say(key, "hello there");
    const events = [
      await sessionEvent(control, "session.created", key),
      await sessionEvent(device, "session.created", key),
      ...(await runFrames(control, runId)),
    ];
    expect(events.slice(0, 2).map((f) => f.payload)).toEqual([{ key, agentId: "main" }, { key, agentId: "main" }]);
    // SPEC §1: events carry no `id` key, not even a null one (frames are parsed JSON: keys as sent).
    for (const frame of events) expect(Object.keys(frame)).not.toContain("id");
    await say(key, "second turn");
    await expect(sessionEvent(control, "session.created", key, 500)).rejects.toThrow(/no matching frame/);
    const preview = await ok(control, "sessions.preview", { key });
    expect(preview).toMatchObject({ key, agentId: "main", model: "builtin/echo", messageCount: 4 });
  });

  it("previews the newest messages first with sender, timestamp and intact parent links", async () => {
    const key = newKey("telegram");
    for (let i = 0; i < 12; i++) await say(key, `message ${i}`);
    const full = await ok(control, "sessions.preview", { key, limit: 200 });
    const messages = full.messages as Array<Record<string, unknown>>;
    expect(messages).toHaveLength(24);
    expect(messages[0]).toMatchObject({ type: "message", role: "assistant" });
    expect(messages[1]).toMatchObject({ type: "message", role: "user", body: "message 11" });
    for (const m of messages) {
      expect(typeof m.sender).toBe("string");
      expect(m.sender).not.toBe("");
      expect(typeof m.timestamp).toBe("number");
    }
    // Newest first: each message's parent is the next one in the list.
    messages.forEach((m, i) => expect(m.parentId).toBe(i === messages.length - 1 ? "" : messages[i + 1]!.id));
    const byDefault = await ok(control, "sessions.preview", { key });
    expect(byDefault.messages).toHaveLength(20);
    expect((await ok(control, "sessions.preview", { key, limit: 3 })).messages).toEqual(messages.slice(0, 3));
  });

  it("lists sessions newest first, filtered by agent, with total, limit and offset", async () => {
    const tag = randomUUID().slice(0, 6);
    const keys = [`list:${tag}-a`, `list:${tag}-b`, `list:${tag}-c`];
    for (const key of keys) await say(key, "hi", "ops");
    const res = await ok(control, "sessions.list", { agentId: "ops" });
    const sessions = res.sessions as Array<Record<string, unknown>>;
    expect(res.total).toBe(sessions.length);
    expect(sessions.every((s) => s.agentId === "ops")).toBe(true);
    expect(sessions.slice(0, 3).map((s) => s.key)).toEqual([...keys].reverse());
    expect(sessions[0]).toMatchObject({ key: keys[2], agentId: "ops", model: "builtin/echo", messageCount: 2 });
    expect(sessions[0]!.updatedAt as number).toBeGreaterThanOrEqual(sessions[0]!.createdAt as number);
    const page = await ok(control, "sessions.list", { agentId: "ops", limit: 2, offset: 1 });
    expect((page.sessions as Array<{ key: string }>).map((s) => s.key)).toEqual([keys[1], keys[0]]);
    const everything = await ok(control, "sessions.list", {});
    expect(everything.total as number).toBeGreaterThanOrEqual(res.total as number);
    expect((everything.sessions as unknown[]).length).toBe(Math.min(50, everything.total as number));
  });

  it("patches agent, model and thinking and emits session.updated with only what changed", async () => {
    const key = newKey("slack");
    await say(key, "hi");
    const watcher = await open("node");
    await ok(watcher, "sessions.subscribe", { key });
    expect(await ok(control, "sessions.patch", { key, model: "builtin/other" })).toEqual({
      updated: true,
      changes: { model: "builtin/other" },
    });
    for (const client of [control, watcher]) {
      expect((await sessionEvent(client, "session.updated", key)).payload).toEqual({
        key,
        changes: { model: "builtin/other" },
      });
    }
    const res = await ok(control, "sessions.patch", { key, thinking: "high", model: "builtin/other" });
    expect(res).toEqual({ updated: true, changes: { thinking: "high" } });
    expect((await sessionEvent(control, "session.updated", key)).payload).toEqual({ key, changes: { thinking: "high" } });
    expect(await ok(control, "sessions.patch", { key, thinking: "high" })).toEqual({ updated: false, changes: {} });
    await expect(sessionEvent(control, "session.updated", key, 500)).rejects.toThrow(/no matching frame/);
    await ok(control, "sessions.patch", { key, agentId: "ops" });
    expect((await sessionEvent(control, "session.updated", key)).payload).toEqual({
      key,
      changes: { agentId: "ops", model: "builtin/echo" },
    });
    expect(await ok(control, "sessions.preview", { key })).toMatchObject({
      agentId: "ops",
      model: "builtin/echo",
      thinking: "high",
    });
    await ok(watcher, "sessions.unsubscribe", { key });
    await ok(control, "sessions.patch", { key, thinking: "low" });
    await sessionEvent(control, "session.updated", key);
    const low = (f: Frame) => (f.payload as { changes?: { thinking?: string } })?.changes?.thinking === "low";
    await expect(watcher.next(low, 500)).rejects.toThrow(/no matching frame/);
  });

  it("answers with the agent the session was patched to when a run names none", async () => {
    const key = newKey("slack");
    await say(key, "before the patch");
    await ok(control, "sessions.patch", { key, agentId: "ops" });
    await say(key, "after the patch");
    const newest = async () => ((await ok(control, "sessions.preview", { key, limit: 1 })).messages as Array<Record<string, unknown>>)[0];
    // SPEC §2: the preview's sender is the answering agent's display name.
    expect(await newest()).toMatchObject({ role: "assistant", sender: "Ops", body: "after the patch" });
    const all = (await ok(control, "sessions.preview", { key })).messages as Array<Record<string, unknown>>;
    expect(all.at(-2)).toMatchObject({ role: "assistant", sender: "Main" });
    // A run that names its agent still gets that one.
    await say(key, "named", "main");
    expect(await newest()).toMatchObject({ role: "assistant", sender: "Main" });
  });

  it("refuses a model whose provider is not configured and leaves the session as it was", async () => {
    const key = newKey("slack");
    await say(key, "hi");
    const before = await ok(control, "sessions.preview", { key });
    const res = await control.request("sessions.patch", { key, model: "nosuch/x" });
    expect(res.error).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/params\.model.*"nosuch"/) });
    await expect(sessionEvent(control, "session.updated", key, 500)).rejects.toThrow(/no matching frame/);
    expect(await ok(control, "sessions.preview", { key })).toEqual(before);
    expect(await ok(control, "sessions.patch", { key, model: "fake-openai/gpt-test" })).toMatchObject({ updated: true });
  });

  it("resets the history and keeps the session", async () => {
    const key = newKey("signal");
    await say(key, "one");
    await say(key, "two");
    expect(await ok(control, "sessions.reset", { key })).toEqual({ reset: true });
    const preview = await ok(control, "sessions.preview", { key });
    expect(preview).toMatchObject({ key, messageCount: 0, messages: [] });
    await say(key, "three");
    const after = (await ok(control, "sessions.preview", { key })).messages as Array<Record<string, unknown>>;
    expect(after.map((m) => m.body)).toEqual([expect.any(String), "three"]);
    expect(after[1]!.parentId).toBe("");
  });

  it("compacts older history into one summary and keeps the recent tail", async () => {
    const key = newKey("imessage");
    for (let i = 0; i < 10; i++) await say(key, `Topic number ${i} is important. More words follow here.`);
    const res = await ok(control, "sessions.compact", { key });
    expect(res.compacted).toBe(true);
    expect(res.beforeSize as number).toBeGreaterThan(res.afterSize as number);
    const preview = await ok(control, "sessions.preview", { key, limit: 50 });
    const messages = preview.messages as Array<Record<string, unknown>>;
    expect(preview.messageCount).toBe(9);
    expect(messages).toHaveLength(9);
    expect(messages[8]).toMatchObject({ kind: "summary", role: "system", parentId: "" });
    expect(messages[8]!.body).toMatch(/^Summary of 12 earlier messages:\n- user: Topic number 0 is important\./);
    expect(messages[7]!.parentId).toBe(messages[8]!.id);
    const again = await ok(control, "sessions.compact", { key });
    expect(again).toEqual({ compacted: false, beforeSize: res.afterSize, afterSize: res.afterSize });
  });

  const compactTwelve = async (key: string) => {
    const res = await ok(control, "sessions.compact", { key });
    expect(res.compacted).toBe(true);
    const messages = (await ok(control, "sessions.preview", { key, limit: 50 })).messages as Array<Record<string, unknown>>;
    expect(messages).toHaveLength(9);
    expect(messages[8]).toMatchObject({ kind: "summary", role: "system", sender: "compaction", parentId: "" });
    return String(messages[8]!.body);
  };
  /** The summarization requests the fake model saw that quote `text` in their transcript. */
  const summaryRequests = (text: string) =>
    fake.requests.filter((r) => JSON.stringify(r.body).includes("<transcript>") && JSON.stringify(r.body).includes(text));

  it("summarises compacted history with the agent's model", async () => {
    const key = newKey("imessage");
    for (let i = 0; i < 10; i++) await say(key, `Model topic ${i} of ${key} matters. More words follow here.`, "oa");
    expect(await compactTwelve(key)).toBe("Fake summary of 12 transcript lines.");
    const [request, ...more] = summaryRequests(`user: Model topic 0 of ${key} matters.`);
    expect(more).toEqual([]);
    expect(request).toMatchObject({ api: "openai", body: { model: "gpt-test" } });
    expect(request!.body.tools).toBeUndefined();
    const messages = request!.body.messages as Array<{ role: string; content: string }>;
    expect(messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(messages[0]!.content).toMatch(/summary/);
    // Assistant turns carry the agent's display name, as named people's turns do.
    expect(messages[1]!.content).toContain(`assistant (OpenAI agent): You said: Model topic 5 of ${key} matters.`);
    expect(messages[1]!.content).not.toContain(`Model topic 6 of ${key}`);
  });

  it("summarises with the session's own model once it was patched to a real one", async () => {
    const key = newKey("imessage");
    for (let i = 0; i < 10; i++) await say(key, `Patched topic ${i} of ${key} matters.`);
    await ok(control, "sessions.patch", { key, model: "fake-anthropic/claude-test" });
    expect(await compactTwelve(key)).toBe("Fake summary of 12 transcript lines.");
    expect(summaryRequests(`Patched topic 0 of ${key}`).map((r) => [r.api, r.body.model])).toEqual([["anthropic", "claude-test"]]);
  });

  it("falls back to the extractive summary, with a warning, when the model is down", async () => {
    const key = newKey("imessage");
    for (let i = 0; i < 10; i++) await say(key, `Down topic ${i} is important. More words follow here.`);
    await ok(control, "sessions.patch", { key, model: "dead/gpt-test" });
    expect(await compactTwelve(key)).toMatch(/^Summary of 12 earlier messages:\n- user: Down topic 0 is important\./);
    const warned = () => gw.fullLogs().split("\n").some((line) => line.includes("model summary unavailable") && line.includes(key));
    await waitFor(() => (warned() ? true : undefined), { what: "the fallback warning" });
  });

  it("deletes a session and its history for good", async () => {
    const key = newKey("hook");
    await say(key, "bye");
    expect(await ok(control, "sessions.delete", { key })).toEqual({ deleted: true });
    expect(await errorOf("sessions.preview", { key })).toBe("NOT_FOUND");
    const list = await ok(control, "sessions.list", { limit: 500 });
    expect((list.sessions as Array<{ key: string }>).some((s) => s.key === key)).toBe(false);
    await say(key, "back again");
    expect(await ok(control, "sessions.preview", { key })).toMatchObject({ messageCount: 2 });
  });

  it("reclaims a deleted session's storage rather than hiding the session", async () => {
    const key = newKey("hook");
    await say(key, "stored until deleted");
    await say(key, "me too");
    // Its history and its metadata, seen where they are stored: the check below looks in the right place.
    expect(await sessionLeftovers(gw, key)).toHaveLength(2);
    expect(await ok(control, "sessions.delete", { key })).toEqual({ deleted: true });
    expect(await sessionLeftovers(gw, key)).toEqual([]);
  });

  it("handles keys with : @ + # . * > and spaces", async () => {
    for (const key of ["telegram:@ops", "signal:+15551234567", "slack:#general", "mail:a.b@c.d", "x:*.>", "y:a b"]) {
      const unique = `${key}-${randomUUID().slice(0, 4)}`;
      await say(unique, "hi");
      expect(await ok(control, "sessions.preview", { key: unique, limit: 1 })).toMatchObject({ key: unique });
    }
  });

  it("answers an unknown key with NOT_FOUND on every method", async () => {
    const key = newKey("nobody");
    expect(await errorOf("sessions.preview", { key })).toBe("NOT_FOUND");
    expect(await errorOf("sessions.patch", { key, model: "builtin/echo" })).toBe("NOT_FOUND");
    expect(await errorOf("sessions.reset", { key })).toBe("NOT_FOUND");
    expect(await errorOf("sessions.delete", { key })).toBe("NOT_FOUND");
    expect(await errorOf("sessions.compact", { key })).toBe("NOT_FOUND");
    const res = await control.request("sessions.preview", { key });
    expect(res.error?.message).toBe(`unknown session: ${key}`);
  });

  it("refuses bad limits, offsets, thinking values and keys with INVALID_REQUEST", async () => {
    const key = newKey();
    await say(key, "hi");
    for (const limit of [-1, 0, 1.5, 501, 1e9, "5", null]) {
      expect(await errorOf("sessions.list", { limit })).toBe("INVALID_REQUEST");
    }
    for (const offset of [-1, 2.5, 1_000_001, "0"]) {
      expect(await errorOf("sessions.list", { offset })).toBe("INVALID_REQUEST");
    }
    for (const limit of [-5, 0, 3.3, 201, "20"]) {
      expect(await errorOf("sessions.preview", { key, limit })).toBe("INVALID_REQUEST");
    }
    for (const thinking of ["extreme", "extended", "", 3]) {
      expect(await errorOf("sessions.patch", { key, thinking })).toBe("INVALID_REQUEST");
    }
    expect(await errorOf("sessions.patch", { key })).toBe("INVALID_REQUEST");
    expect(await errorOf("sessions.patch", { key, model: "no-slash" })).toBe("INVALID_REQUEST");
    expect(await errorOf("sessions.patch", { key, agentId: "nobody" })).toBe("NOT_FOUND");
    const badKeys = ["", "nocolon", ":identifier", "prefix:", "bad prefix:x", `p:${"k".repeat(520)}`, "p:a\nb", 42];
    for (const bad of badKeys) {
      for (const method of ["sessions.preview", "sessions.reset", "sessions.delete", "sessions.compact"]) {
        expect(await errorOf(method, { key: bad })).toBe("INVALID_REQUEST");
      }
    }
    const missing = await control.request("sessions.preview", {});
    expect(missing.error).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/params\.key/) });
    expect(await ok(control, "sessions.preview", { key })).toMatchObject({ messageCount: 2 });
  });

  it("keeps listing and changing sessions to control connections", async () => {
    expect(await errorOf("sessions.list", {}, device)).toBe("FORBIDDEN");
    expect(await errorOf("sessions.delete", { key: "webchat:x" }, device)).toBe("FORBIDDEN");
  });
});
