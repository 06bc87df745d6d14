import { createSubjects, InProcessBus } from "@gw/bus";
import { type AgentEventPayload, decodeClientEvent, isGatewayError, type RunRecord } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { createMemoryFastStore } from "@gw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TERMINAL_SEQ } from "./agent-events.js";
import { RunRegistry } from "./run-registry.js";
import { queuedRecord, runRequest } from "./run-request.js";
import { RunWaiting, type RunWaitingDeps } from "./run-waiting.js";

const subjects = createSubjects("t");
const logger = createLogger({ service: "test", level: "silent" });
const timings = { pollMs: 30, settleMs: 200, skewMs: 0 };

let bus: InProcessBus;
let registry: RunRegistry;
let runnerRegistry: RunRegistry;
let deps: RunWaitingDeps;
const open: RunWaiting[] = [];

beforeEach(() => {
  bus = new InProcessBus(() => undefined);
  const store = createMemoryFastStore();
  const options = { retentionMs: 60_000, liveTtlMs: 60_000, heartbeatTtlMs: 100 };
  registry = new RunRegistry(store, options);
  // The runner's own registry: a runner elsewhere, which the waiter may call dead.
  runnerRegistry = new RunRegistry(store, options);
  deps = { bus, subjects, registry, logger, timings };
});
afterEach(async () => {
  for (const w of open.splice(0)) w.close();
  await bus.close();
});

async function registered(runId: string): Promise<RunRecord> {
  const record = queuedRecord(runRequest({ runId, nonce: `n-${runId}`, sessionKey: "s:1", message: "hi", edgeId: "e" }));
  await registry.create(record);
  return record;
}

function waiting(runId: string, checkFirst = false, seen: unknown[] = []): RunWaiting {
  const w = new RunWaiting(deps, runId, { checkFirst }, { deliver: (p) => seen.push(p.seq), replay: (ps) => seen.push(ps.map((p) => p.seq)) });
  open.push(w);
  return w;
}

const ev = (runId: string, seq: number, phase?: string): AgentEventPayload =>
  phase ? { runId, seq, stream: "lifecycle", data: { phase } } : { runId, seq, stream: "assistant", data: { type: "text", text: "." } };

describe("RunWaiting (the driver of a wait)", () => {
  it("hands over the events that came before admission, then delivers, and answers with the terminal event's record", async () => {
    const record = await registered("r1");
    const seen: unknown[] = [];
    const w = waiting("r1", false, seen);
    w.event(ev("r1", 1), undefined);
    w.event(ev("r1", 2), undefined);
    w.admit();
    const result = w.result(5_000);
    w.event(ev("r1", 3), undefined);
    const final = await registry.finish(record, { payloads: [{ type: "text", text: "done" }] });
    w.event(ev("r1", 4, "end"), final);
    expect(await result).toEqual(final);
    expect(seen).toEqual([[1, 2], 1, 2, 3, 4]);
  });

  it("ends a run whose runner stopped heartbeating with UNAVAILABLE, and tells whoever follows it", async () => {
    await registered("r2");
    await runnerRegistry.claim("r2", "runner-1", "n-r2");
    await runnerRegistry.heartbeat("r2", "runner-1");
    const heard: Array<{ seq: number; payload: string }> = [];
    const unsubscribe = bus.subscribe(subjects.runEvents({ runId: "r2", part: "life" }), (data) => {
      const event = decodeClientEvent(data);
      heard.push({ seq: event.seq, payload: Buffer.from(event.payloadJson).toString("utf8") });
    });
    const w = waiting("r2");
    w.admit();
    const result = await w.result(10_000);
    unsubscribe();
    expect(result).toMatchObject({ state: "error", error: { code: "UNAVAILABLE", message: "the runner executing the run stopped responding" } });
    expect((await registry.get("r2"))?.state).toBe("error");
    expect(heard).toHaveLength(1);
    expect(heard[0]!.seq).toBe(TERMINAL_SEQ);
    expect(JSON.parse(heard[0]!.payload)).toMatchObject({ stream: "lifecycle", data: { phase: "error", code: "UNAVAILABLE" } });
  });

  it("answers a run that ended before the wait began from the registry, when told to check first", async () => {
    const record = await registered("r3");
    const final = await registry.finish(record, { payloads: [] });
    const w = waiting("r3", true);
    w.admit();
    expect(await w.result(10_000)).toEqual(final);
  });

  it("answers null once the time is up with the run still live (queued, or running with a heartbeat)", async () => {
    await registered("r4");
    const w = waiting("r4");
    w.admit();
    expect(await w.result(100)).toBeNull();
    expect((await registry.get("r4"))?.state).toBe("queued");
  });

  it("answers with the record of a failed dispatch at once", async () => {
    const record = await registered("r5");
    const w = waiting("r5");
    w.admit();
    const failed = { ...record, state: "error" as const, error: { code: "UNAVAILABLE" as const, message: "no" } };
    w.dispatchFailed(failed);
    expect(await w.result(10_000)).toEqual(failed);
  });

  it("refuses with NOT_FOUND when the registry no longer knows the run", async () => {
    const w = waiting("never-registered", true);
    w.admit();
    const err = await w.result(10_000).catch((e: unknown) => e);
    expect(isGatewayError(err) && err.code).toBe("NOT_FOUND");
    expect((err as Error).message).toBe("run never-registered expired");
  });
});
