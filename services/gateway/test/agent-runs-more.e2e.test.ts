import { describe, expect, it } from "vitest";
import { type AgentEvent, collectRun, runGatewaySuite, send, waitRunEvent } from "./fixtures/agent-runs.js";
import { MODES } from "./fixtures/gateway.js";
import type { Frame, WsClient } from "./fixtures/ws-client.js";

const isTerminal = (e: AgentEvent) => e.stream === "lifecycle" && (e.data.phase === "end" || e.data.phase === "error");

/**
 * Takes the `agent` events of several runs off one socket in arrival order, until every run
 * ended. Arrival order is what proves (or disproves) overlap: no clocks involved.
 */
async function collectRuns(client: WsClient, runIds: string[], timeoutMs = 30_000): Promise<AgentEvent[]> {
  const wanted = new Set(runIds);
  const open = new Set(runIds);
  const events: AgentEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  const isWanted = (f: Frame) => f.event === "agent" && wanted.has((f.payload as unknown as AgentEvent | undefined)?.runId ?? "");
  while (open.size > 0) {
    const event = (await client.next(isWanted, Math.max(1, deadline - Date.now()))).payload as unknown as AgentEvent;
    events.push(event);
    if (isTerminal(event)) open.delete(event.runId);
  }
  return events;
}

const firstIndex = (events: AgentEvent[], runId: string, pred: (e: AgentEvent) => boolean) =>
  events.findIndex((e) => e.runId === runId && pred(e));
const lastIndex = (events: AgentEvent[], runId: string, pred: (e: AgentEvent) => boolean) =>
  events.findLastIndex((e) => e.runId === runId && pred(e));
const isAssistant = (e: AgentEvent) => e.stream === "assistant";

describe.each(MODES)("agent runs, more (%s)", (mode) => {
  // Devices run agents on any session they name; delivering an answer is control's.
  const suite = runGatewaySuite(mode, "node");
  const open = (edge?: number, role?: string) => suite.open(edge, role);

  it("serialises runs on one session and runs different sessions in parallel", async () => {
    const client = await open();
    const [first, same, other] = ["first", "same", "other"].map((name) => `serial-${name}-${mode}`) as [string, string, string];
    const key = `e2e:serial:${mode}`;
    const responses = [send(client, "agent", { message: "slow first", sessionKey: key, agentId: "oa", runId: first }, 30_000)];
    // `first` holds the session's lock once it streams; both others are queued behind that point.
    const firstChunk = await waitRunEvent(client, first, isAssistant);
    responses.push(
      send(client, "agent", { message: "slow same session", sessionKey: key, agentId: "oa", runId: same }, 30_000),
      send(client, "agent", { message: "slow other session", sessionKey: `e2e:serial-other:${mode}`, agentId: "oa", runId: other }, 30_000),
    );
    const events = [firstChunk, ...(await collectRuns(client, [first, same, other]))];

    const firstEnd = firstIndex(events, first, isTerminal);
    expect(events[firstEnd]!.data.phase).toBe("end");
    // Same session: not one token of the second run before the first run ended.
    expect(firstIndex(events, same, isAssistant)).toBeGreaterThan(firstEnd);
    // Other session: its stream starts before the first run ends and the first run streams on
    // after that, so the two windows overlap.
    const otherStart = firstIndex(events, other, isAssistant);
    expect(otherStart).toBeGreaterThan(-1);
    expect(otherStart).toBeLessThan(firstEnd);
    expect(lastIndex(events, first, isAssistant)).toBeGreaterThan(otherStart);
    for (const response of await Promise.all(responses)) expect(response).toMatchObject({ ok: true });
  });

  it("ends a deliver: true run that cannot be delivered before the model is called", async () => {
    // No channels are configured: embedded delivery says so; in distributed mode no delivery
    // process runs at all, so the bus has no responder.
    const expected = mode === "embedded" ? "CHANNEL_NOT_FOUND" : "UNAVAILABLE";
    const client = await open(0, "control");
    const runId = `deliver-${mode}`;
    const response = send(client, "agent", {
      message: "deliver this",
      sessionKey: `e2e:deliver:${mode}`,
      agentId: "oa",
      runId,
      deliver: true,
      messageChannel: "telegram",
      to: "+15550001",
    });
    const events = await collectRun(client, runId);
    expect(events.at(-1)!.data).toMatchObject({ phase: "error", code: expected });
    const res = await response;
    expect(res).toMatchObject({ ok: false, error: { code: expected } });
    if (mode === "embedded") expect(res.error?.message).toMatch(/channel "telegram" is not configured/);
    expect(events.some(isAssistant)).toBe(false);
  });

  it("generates a runId when the request has none, a different one per run", async () => {
    const client = await open();
    const ids: string[] = [];
    for (const n of [1, 2]) {
      const res = await send(client, "agent", { message: `no run id ${n}`, sessionKey: `e2e:genid:${n}:${mode}`, agentId: "oa" });
      expect(res.ok).toBe(true);
      const runId = res.payload?.runId;
      expect(typeof runId).toBe("string");
      expect(runId).not.toBe("");
      // The events came before the response, all under the same generated id.
      const events = await collectRun(client, runId as string, 5_000);
      expect(events[0]!.data.phase).toBe("start");
      expect(events.at(-1)!.data.phase).toBe("end");
      expect(events.every((e) => e.runId === runId)).toBe(true);
      ids.push(runId as string);
    }
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("aborts a live run mid-stream with agent.abort", async () => {
    const client = await open();
    const runId = `alias-abort-${mode}`;
    const response = send(client, "agent", { message: "slow abort via alias", sessionKey: `e2e:alias-abort:${mode}`, agentId: "oa", runId });
    await waitRunEvent(client, runId, isAssistant);
    const other = await open(1);
    expect(await send(other, "agent.abort", { runId })).toMatchObject({ ok: true, payload: { runId, aborted: true } });
    const last = await waitRunEvent(client, runId, (e) => e.stream === "lifecycle" && e.data.phase !== "start");
    expect(last.data).toMatchObject({ phase: "error", code: "ABORTED", aborted: true });
    expect(await response).toMatchObject({ ok: false, error: { code: "ABORTED" } });
  });

  it("keeps the Anthropic agent's full tool exchange in the session", async () => {
    const client = await open();
    const key = `e2e:an-history:${mode}`;
    expect(await send(client, "agent", { message: "tools:time__now first", sessionKey: key, agentId: "an" })).toMatchObject({ ok: true });
    const preview = await send(client, "sessions.preview", { key });
    expect(preview.ok).toBe(true);
    const messages = preview.payload?.messages as Array<{ role: string; sender: string; body: string }>;
    expect(messages.map((m) => m.role).sort()).toEqual(["assistant", "assistant", "tool", "user"]);
    const bodies = messages.map((m) => `${m.role}:${m.body}`);
    expect(bodies).toEqual(expect.arrayContaining(["user:tools:time__now first", "assistant:Tools said: 1 results"]));
    expect(messages.find((m) => m.role === "tool")).toMatchObject({ sender: "time.now" });

    // The replay to Anthropic carries the exchange as tool_use / tool_result blocks.
    suite.fake.requests.length = 0;
    expect(await send(client, "agent", { message: "second turn", sessionKey: key, agentId: "an" })).toMatchObject({ ok: true });
    const replayed = suite.fake.requests[0]!.body.messages as Array<{ role: string; content: unknown }>;
    const blocks = JSON.stringify(replayed);
    expect(blocks).toContain('"type":"tool_use"');
    expect(blocks).toContain('"type":"tool_result"');
  });

  it.each(["oa", "an"])("ends the run with MODEL_ERROR when the provider answers 429 on every attempt (%s)", async (agentId) => {
    // Control sees the failure's own words; other roles get the catalogue's (error-detail.e2e.test.ts).
    const client = await open(0, "control");
    const runId = `busy429-${agentId}-${mode}`;
    const message = `busy429 ${agentId} ${mode}`;
    const response = send(client, "agent", { message, sessionKey: `e2e:busy429:${agentId}:${mode}`, agentId, runId });
    const events = await collectRun(client, runId);
    expect(events.at(-1)!.data).toMatchObject({ phase: "error", code: "MODEL_ERROR" });
    expect(String(events.at(-1)!.data.error)).toMatch(/429/);
    expect(events.some(isAssistant)).toBe(false);
    expect(await response).toMatchObject({ ok: false, error: { code: "MODEL_ERROR" } });
    // Retried, then given up: the fake saw more than one attempt for this message.
    expect(suite.fake.requests.filter((r) => JSON.stringify(r.body).includes(message)).length).toBeGreaterThan(1);
  });
});
