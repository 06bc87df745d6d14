import { describe, expect, it } from "vitest";
import { assistantText, collectRun, runGatewaySuite, send, shape, waitRunEvent } from "./fixtures/agent-runs.js";
import { MODES } from "./fixtures/gateway.js";

describe.each(MODES)("agent runs (%s)", (mode) => {
  const suite = runGatewaySuite(mode, "control");
  const open = (edge?: number, role?: string) => suite.open(edge, role);

  it("streams builtin/echo chunks that concatenate to the payload", async () => {
    const client = await open(0, "node");
    const response = send(client, "agent", { message: "hello there dear gateway", sessionKey: "e2e:echo", runId: `echo-${mode}` });
    const events = await collectRun(client, `echo-${mode}`);
    expect(shape(events)).toEqual(["lifecycle:start", "assistant", "lifecycle:end"]);
    expect(events.filter((e) => e.stream === "assistant").length).toBeGreaterThan(1);
    const res = await response;
    expect(res).toMatchObject({ ok: true, payload: { runId: `echo-${mode}`, payloads: [{ type: "text", text: "hello there dear gateway" }] } });
    expect(assistantText(events)).toBe("hello there dear gateway");
  });

  it.each(["oa", "an"])("runs two tool calls with the exact event sequence (%s)", async (agentId) => {
    const client = await open(0, "node");
    const runId = `tools-${agentId}-${mode}`;
    const response = send(client, "agent", { message: "tools:time__now,time__now now", sessionKey: `e2e:tools:${agentId}`, agentId, runId });
    const events = await collectRun(client, runId);
    expect(shape(events)).toEqual([
      "lifecycle:start",
      "tool:start:call_1",
      "tool:result:call_1",
      "tool:start:call_2",
      "tool:result:call_2",
      "assistant",
      "lifecycle:end",
    ]);
    const start = events.find((e) => e.data.phase === "start" && e.stream === "tool")!;
    expect(start.data).toMatchObject({ name: "time.now", input: {} });
    const result = events.find((e) => e.data.phase === "result")!;
    expect(typeof (result.data.result as { content: unknown }).content).toBe("string");
    const res = await response;
    expect(res.payload?.payloads).toEqual([{ type: "text", text: assistantText(events) }]);
    expect(assistantText(events)).toBe("Tools said: 2 results");
  });

  it("delivers a run's lifecycle events to a control connection on another edge, once each and in order", async () => {
    const watcher = await open(1, "control");
    const client = await open(0, "node");
    const runId = `fanout-${mode}`;
    const response = send(client, "agent", { message: "tools:time__now fan", sessionKey: "e2e:fanout", agentId: "oa", runId });
    const mine = await collectRun(client, runId);
    const theirs = await collectRun(watcher, runId);
    // The whole stream is for those who ask (agent.subscribe: agent-subscribe.e2e.test.ts).
    expect(theirs).toEqual(mine.filter((e) => e.stream === "lifecycle"));
    expect(mine.map((e) => e.seq)).toEqual(mine.map((_, i) => i + 1));
    await response;
    // Nothing of this run is left over (no duplicates).
    await expect(watcher.next((f) => f.event === "agent" && (f.payload as { runId?: string }).runId === runId, 300)).rejects.toThrow();
  });

  it("answers agent.wait from a second edge during the run and after it ended", async () => {
    const client = await open(0, "node");
    const other = await open(1, "node");
    const runId = `wait-${mode}`;
    const response = send(client, "agent", { message: "slow please", sessionKey: "e2e:wait", agentId: "oa", runId });
    await waitRunEvent(client, runId, (e) => e.stream === "assistant");
    const waited = await send(other, "agent.wait", { runId, timeoutSeconds: 30 }, 30_000);
    expect(waited).toMatchObject({ ok: true, payload: { completed: true, result: { payloads: [{ type: "text" }] } } });
    const res = await response;
    expect((waited.payload?.result as { payloads: unknown }).payloads).toEqual(res.payload?.payloads);
    const after = await send(other, "agent.wait", { runId });
    expect(after.payload).toMatchObject({ completed: true });
    const short = await send(other, "agent.wait", { runId: "no-such-run" });
    expect(short).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
  });

  it("aborts a run mid-stream with chat.abort (and agent.abort for unknown runs)", async () => {
    const client = await open(0, "node");
    const runId = `abort-${mode}`;
    const response = send(client, "agent", { message: "slow abort me", sessionKey: "e2e:abort", agentId: "an", runId });
    await waitRunEvent(client, runId, (e) => e.stream === "assistant");
    const other = await open(1, "node");
    expect(await send(other, "chat.abort", { runId })).toMatchObject({ ok: true, payload: { aborted: true } });
    const last = await waitRunEvent(client, runId, (e) => e.stream === "lifecycle" && e.data.phase !== "start");
    expect(last.data).toMatchObject({ phase: "error", aborted: true });
    expect(await response).toMatchObject({ ok: false, error: { code: "ABORTED" } });
    expect(await send(client, "agent.abort", { runId: "never-existed" })).toMatchObject({ ok: true, payload: { aborted: false } });
    expect(await send(client, "chat.abort", { runId })).toMatchObject({ ok: true, payload: { aborted: false } });
  });

  it("refuses a duplicate live runId", async () => {
    const client = await open(0, "node");
    const runId = `dup-${mode}`;
    const first = send(client, "agent", { message: "slow dup", sessionKey: "e2e:dup1", agentId: "oa", runId });
    await waitRunEvent(client, runId, (e) => e.stream === "lifecycle");
    expect(await send(client, "agent", { message: "again", sessionKey: "e2e:dup2", runId })).toMatchObject({ ok: false, error: { code: "CONFLICT" } });
    await send(client, "chat.abort", { runId });
    await first;
  });

  it.each([
    ["fail500", "HTTP 500"],
    ["hang", "stalled"],
    ["drop", "dropped|ended before"],
  ])("ends the run with lifecycle error on provider %s", async (word, reason) => {
    for (const agentId of ["oa", "an"]) {
      // Control sees the failure's own words; other roles get the catalogue's (error-detail.e2e.test.ts).
      const client = await open(0, "control");
      const runId = `${word}-${agentId}-${mode}`;
      const response = send(client, "agent", { message: `${word} now`, sessionKey: `e2e:${word}`, agentId, runId });
      const events = await collectRun(client, runId);
      const last = events.at(-1)!;
      expect(last.data.phase).toBe("error");
      expect(String(last.data.error)).toMatch(new RegExp(reason));
      expect(await response).toMatchObject({ ok: false, error: { code: "MODEL_ERROR" } });
    }
  });

  it("picks the model: request override, then the session's (sessions.patch) for its own agent, then the agent's", async () => {
    const client = await open(0, "control");
    const key = `e2e:model-${mode}`;
    const apiOf = (word: string) => suite.fake.requests.find((r) => JSON.stringify(r.body).includes(word))?.api;

    expect((await send(client, "agent", { message: "model-agent", sessionKey: key, agentId: "oa" })).ok).toBe(true);
    expect(apiOf("model-agent")).toBe("openai");

    const override = await send(client, "agent", { message: "model-override", sessionKey: key, agentId: "oa", model: "fake-anthropic/claude-test" });
    expect(override.ok).toBe(true);
    expect(apiOf("model-override")).toBe("anthropic");

    expect((await send(client, "sessions.patch", { key, model: "fake-anthropic/claude-test" })).ok).toBe(true);
    expect((await send(client, "agent", { message: "model-session", sessionKey: key, agentId: "oa" })).ok).toBe(true);
    expect(apiOf("model-session")).toBe("anthropic");

    // Another agent answering on the session uses its own model, not the session's agent's.
    expect((await send(client, "sessions.patch", { key, model: "fake-openai/gpt-test" })).ok).toBe(true);
    expect((await send(client, "agent", { message: "model-other-agent", sessionKey: key, agentId: "an" })).ok).toBe(true);
    expect(apiOf("model-other-agent")).toBe("anthropic");
  });

  it("ends a run that outlives its timeoutSeconds with lifecycle error TIMEOUT", async () => {
    const client = await open(0, "node");
    const runId = `timeout-${mode}`;
    // `slow` streams for about 4 s; the run may take 1 s.
    const response = send(client, "agent", { message: "slow timeout", sessionKey: "e2e:timeout", agentId: "oa", runId, timeoutSeconds: 1 });
    const events = await collectRun(client, runId);
    expect(events.some((e) => e.stream === "assistant")).toBe(true);
    expect(events.at(-1)!.data).toMatchObject({ phase: "error", code: "TIMEOUT" });
    expect(await response).toMatchObject({ ok: false, error: { code: "TIMEOUT" } });
  });

  it("retries a 429 (honouring retry-after) before any token and then answers", async () => {
    const client = await open(0, "node");
    for (const agentId of ["oa", "an"]) {
      const runId = `r429-${agentId}-${mode}`;
      const res = await send(client, "agent", { message: `fail429 ${agentId}`, sessionKey: "e2e:429", agentId, runId });
      expect(res).toMatchObject({ ok: true, payload: { payloads: [{ text: `You said: fail429 ${agentId}` }] } });
    }
  });

  it("maps thinking and extraSystemPrompt onto each provider's request", async () => {
    const client = await open(0, "node");
    suite.fake.requests.length = 0;
    for (const agentId of ["oa", "an"]) {
      const runId = `think-${agentId}-${mode}`;
      const response = send(client, "agent", { message: "think hard", sessionKey: `e2e:think:${agentId}`, agentId, runId, thinking: "high", extraSystemPrompt: "EXTRA" });
      const events = await collectRun(client, runId);
      expect(shape(events)).toEqual(["lifecycle:start", "lifecycle:thinking", "assistant", "lifecycle:end"]);
      await response;
    }
    const [oa, an] = suite.fake.requests;
    expect(oa?.body).toMatchObject({ reasoning_effort: "high", stream: true });
    expect((oa?.body.messages as unknown[])[0]).toEqual({ role: "system", content: "EXTRA\n\nBe brief." });
    expect(oa?.headers.authorization).toBe("Bearer sk-fake");
    expect(an?.body).toMatchObject({ system: "EXTRA", thinking: { type: "enabled", budget_tokens: 16_384 } });
    expect(an?.headers["x-api-key"]).toBe("ak-fake");
  });

  it("keeps the full exchange in the session and replays it to the model", async () => {
    const client = await open(0, "node");
    const key = `e2e:history:${mode}`;
    await send(client, "agent", { message: "tools:time__now first", sessionKey: key, agentId: "oa" });
    suite.fake.requests.length = 0;
    await send(client, "agent", { message: "second turn", sessionKey: key, agentId: "oa" });
    const replayed = suite.fake.requests[0]!.body.messages as Array<{ role: string; content: unknown; tool_calls?: unknown[] }>;
    expect(replayed.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
    expect(replayed[2]!.tool_calls).toHaveLength(1);
    const preview = await send(client, "sessions.preview", { key });
    expect(preview.ok).toBe(true);
    const bodies = (preview.payload?.messages as Array<{ role: string; body: string }>).map((m) => `${m.role}:${m.body}`);
    expect(bodies).toEqual(expect.arrayContaining(["user:tools:time__now first", "assistant:Tools said: 1 results", "user:second turn", "assistant:You said: second turn"]));
  });

  it("refuses bad params with INVALID_REQUEST", async () => {
    const client = await open(0, "node");
    expect(await send(client, "agent", { sessionKey: "e2e:x" })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    expect(await send(client, "agent", { message: "x", sessionKey: "e2e:x", thinking: "max" })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    expect(await send(client, "agent", { message: "x", sessionKey: "e2e:x", agentId: "nobody" })).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
  });
});
