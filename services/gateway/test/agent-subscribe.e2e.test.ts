import { describe, expect, it } from "vitest";
import { type AgentEvent, collectRun, runGatewaySuite, send, waitRunEvent } from "./fixtures/agent-runs.js";
import { MODES } from "./fixtures/gateway.js";
import type { WsClient } from "./fixtures/ws-client.js";

/** Events are kept 8 s here, so the retention test is quick. */
const RETENTION_SECONDS = 8;

const seqs = (events: AgentEvent[]) => events.map((e) => e.seq);
const isEnd = (e: AgentEvent) => e.stream === "lifecycle" && (e.data.phase === "end" || e.data.phase === "error");

/** Takes the run's events off the socket until `n` of them arrived (the starter of a slow run). */
async function firstEvents(client: WsClient, runId: string, n: number): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  while (events.length < n) events.push(await waitRunEvent(client, runId, () => true));
  return events;
}

describe.each(MODES)("agent.subscribe (%s)", (mode) => {
  const suite = runGatewaySuite(mode, "control", { runner: { eventRetentionSeconds: RETENTION_SECONDS } });
  const open = (edge?: number, role?: string) => suite.open(edge, role);

  it("gives a connection on another edge a run's whole stream from the subscription on, and ends with the run", async () => {
    const starter = await open(0, "node");
    const runId = `sub-run-${mode}`;
    const answer = send(starter, "agent", { message: "slow sub", sessionKey: `e2e:sub-run:${mode}`, agentId: "oa", runId });
    const early = await firstEvents(starter, runId, 3);
    const watcher = await open(1, "node");
    const subscribed = await send(watcher, "agent.subscribe", { runId });
    expect(subscribed).toMatchObject({ ok: true, payload: { subscribed: true, runId, status: "running" } });
    const theirs = await collectRun(watcher, runId);
    const mine = [...early, ...(await collectRun(starter, runId))];
    expect((await answer).ok).toBe(true);
    // From some event on, the very same events, once each and in order.
    expect(theirs).toEqual(mine.slice(mine.findIndex((e) => e.seq === theirs[0]!.seq)));
    expect(seqs(mine)).toEqual(mine.map((_, i) => i + 1));
    expect(theirs.filter((e) => e.stream === "assistant").length).toBeGreaterThan(10);
    // The subscription ended with the run: unsubscribing finds nothing.
    expect(await send(watcher, "agent.unsubscribe", { runId })).toMatchObject({ ok: true, payload: { unsubscribed: false } });
  });

  it("resumes a run after a seq on another connection and edge: every missed event, then the live ones, no gap, no duplicate", async () => {
    const starter = await open(0, "node");
    const runId = `sub-resume-${mode}`;
    const answer = send(starter, "agent", { message: "slow resume", sessionKey: `e2e:sub-resume:${mode}`, agentId: "oa", runId });
    const seen = await firstEvents(starter, runId, 5);
    // The client "loses" its connection after seq 5, and a moment later asks another edge.
    await waitRunEvent(starter, runId, (e) => e.seq >= 9);
    const again = await open(1, "node");
    const resumed = await send(again, "agent.subscribe", { runId, afterSeq: 5 });
    expect(resumed, JSON.stringify(resumed)).toMatchObject({ ok: true, payload: { subscribed: true, runId, status: "running", lastSeq: expect.any(Number) } });
    expect(resumed.payload!.lastSeq as number).toBeGreaterThanOrEqual(9);
    const rest = await collectRun(again, runId);
    const all = [...seen, ...rest];
    expect(seqs(all)).toEqual(all.map((_, i) => i + 1));
    expect(isEnd(all.at(-1)!)).toBe(true);
    expect((await answer).ok).toBe(true);

    // After the end, from the start: every kept event, then the answer says it is over.
    const late = await open(1, "node");
    const replayed = await send(late, "agent.subscribe", { runId, afterSeq: 0 });
    expect(replayed).toMatchObject({ ok: true, payload: { subscribed: false, status: "ok", lastSeq: all.at(-1)!.seq } });
    expect(await collectRun(late, runId)).toEqual(all);
  });

  it("gives a session's subscriber the events of every run on it, and of no other session", async () => {
    const key = `e2e:sub-session:${mode}`;
    const watcher = await open(1, "node");
    expect(await send(watcher, "agent.subscribe", { sessionKey: key })).toMatchObject({ ok: true, payload: { subscribed: true, sessionKey: key } });
    const starter = await open(0, "node");
    const other = await send(starter, "agent", { message: "not this one", sessionKey: `${key}:other`, runId: `sub-other-${mode}` });
    expect(other.ok).toBe(true);
    const runId = `sub-session-${mode}`;
    expect((await send(starter, "agent", { message: "hello session watchers", sessionKey: key, runId })).ok).toBe(true);
    const events = await collectRun(watcher, runId);
    expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
    await expect(watcher.next((f) => f.event === "agent" && (f.payload as { runId?: string }).runId === `sub-other-${mode}`, 300)).rejects.toThrow();
    expect(await send(watcher, "agent.unsubscribe", { sessionKey: key })).toMatchObject({ ok: true, payload: { unsubscribed: true } });
  });

  it("gives a control connection's firehose every run's whole stream until it unsubscribes", async () => {
    const dashboard = await open(1, "control");
    expect(await send(dashboard, "agent.subscribe", { all: true })).toMatchObject({ ok: true, payload: { subscribed: true, all: true } });
    const starter = await open(0, "node");
    const runId = `sub-all-${mode}`;
    expect((await send(starter, "agent", { message: "for the dashboard", sessionKey: `e2e:sub-all:${mode}`, runId })).ok).toBe(true);
    const events = await collectRun(dashboard, runId);
    expect(events.some((e) => e.stream === "assistant")).toBe(true);
    expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
    expect(await send(dashboard, "agent.unsubscribe", { all: true })).toMatchObject({ ok: true, payload: { unsubscribed: true } });
    // Back to lifecycle only.
    const after = `sub-all-after-${mode}`;
    expect((await send(starter, "agent", { message: "only lifecycle now", sessionKey: `e2e:sub-all:${mode}`, runId: after })).ok).toBe(true);
    expect((await collectRun(dashboard, after)).map((e) => e.stream)).toEqual(["lifecycle", "lifecycle"]);
  });

  it("refuses what it cannot do with a clear error", async () => {
    const node = await open(1, "node");
    expect(await send(node, "agent.subscribe", { all: true })).toMatchObject({ ok: false, error: { code: "FORBIDDEN", message: expect.stringContaining("all") } });
    expect(await send(node, "agent.subscribe", { runId: "never-was" })).toMatchObject({ ok: false, error: { code: "NOT_FOUND", message: expect.stringContaining("never-was") } });
    expect(await send(node, "agent.subscribe", { sessionKey: "e2e:x", afterSeq: 3 })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST", message: expect.stringContaining("afterSeq") } });
    expect(await send(node, "agent.subscribe", {})).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST", message: expect.stringContaining("exactly one") } });
    expect(await send(node, "agent.subscribe", { runId: "a", sessionKey: "b" })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    expect(await send(node, "agent.subscribe", { runId: "a", afterSeq: -1 })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    const webchat = await open(1, "webchat");
    const forbidden = await send(webchat, "agent.subscribe", { sessionKey: "e2e:someone-else" });
    expect(forbidden).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
  });

  it("says a run's events are past retention, naming the run, once they are", async () => {
    const client = await open(0, "node");
    const runId = `sub-expired-${mode}`;
    expect((await send(client, "agent", { message: "soon forgotten", sessionKey: `e2e:sub-expired:${mode}`, runId })).ok).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, (RETENTION_SECONDS + 2) * 1000));
    const late = await open(1, "node");
    const expired = await send(late, "agent.subscribe", { runId, afterSeq: 0 });
    expect(expired).toMatchObject({ ok: false, error: { code: "NOT_FOUND", details: { runId, afterSeq: 0 } } });
    expect(expired.error!.message).toMatch(/no longer kept/);
    // The outcome itself is still there.
    expect(await send(late, "agent.wait", { runId })).toMatchObject({ ok: true, payload: { completed: true, status: "ok" } });
  }, 30_000);
});
