import { createSubjects, InProcessBus } from "@gw/bus";
import { type AgentEventPayload, type ClientEvent, decodeClientEvent, GatewayError, type RunRecord } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { agentEventMessage, type RunAddress, type RunEventLog, RunRegistry, terminalMessages } from "@gw/runs";
import { createMemoryFastStore } from "@gw/store";
import { waitFor } from "@gw/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { CallContext } from "../call-context.js";
import { AgentSubscriptions } from "./agent-subscriptions.js";
import { EventHub, type EventTarget } from "./event-hub.js";
import { RunEventRouter } from "./run-event-router.js";

const subjects = createSubjects("gw");
const logger = createLogger({ service: "test", level: "silent" });
const RUN: RunAddress = { runId: "r1", sessionKey: "k:1", edgeId: "elsewhere" };

/** A log that answers from what it was given; the next read can be held and answered short. */
class ScriptedLog implements RunEventLog {
  kept: ClientEvent[] = [];
  reads = 0;
  private held: number | undefined;
  private waiting: Promise<void> = Promise.resolve();
  release: () => void = () => undefined;

  /** The next read takes the first `count` events kept when it is called, and answers on release(). */
  holdNext(count: number): void {
    this.waiting = new Promise((resolve) => (this.release = resolve));
    this.held = count;
  }

  async read(): Promise<ClientEvent[]> {
    this.reads += 1;
    const held = this.held;
    this.held = undefined;
    const answer = held === undefined ? [...this.kept] : this.kept.slice(0, held);
    if (held !== undefined) await this.waiting;
    return answer.sort((a, b) => a.seq - b.seq);
  }
  isHealthy(): boolean {
    return true;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function setup(subsLogger = logger) {
  const bus = new InProcessBus();
  const hub = new EventHub({ bus, subjects, logger });
  const router = new RunEventRouter({ bus, subjects, hub, logger, edgeId: "here" });
  const registry = new RunRegistry(createMemoryFastStore());
  const log = new ScriptedLog();
  const subs = new AgentSubscriptions({ router, hub, registry, log, logger: subsLogger, maxPerConnection: 3 });
  const seqs: number[] = [];
  const data: Array<Record<string, unknown>> = [];
  const target: EventTarget = {
    id: "c1",
    role: "node",
    accepts: () => true,
    seesErrorDetail: () => false,
    sendText: (frame) => {
      const { payload } = JSON.parse(String(frame)) as { payload: AgentEventPayload };
      seqs.push(payload.seq);
      data.push(payload.data);
    },
  };
  hub.add(target);
  const closers: Array<() => void> = [];
  const ctx = {
    connId: "c1",
    role: "node",
    access: "node",
    assertSession: () => undefined,
    onClose: (cleanup: () => void) => closers.push(cleanup),
  } as unknown as CallContext;
  let seq = 0;
  /** The runner: the next event on the bus (unless `lost` on its way to this edge) and in the log; `end` with `failure`, a lifecycle error. */
  const emit = (opts: { end?: boolean; lost?: boolean; failure?: Record<string, unknown> } = {}) => {
    seq += 1;
    const ending = opts.failure ?? { phase: "end" };
    const event = { runId: RUN.runId, stream: opts.end ? ("lifecycle" as const) : ("assistant" as const), data: opts.end ? ending : { text: `t${seq}` } };
    const final: RunRecord = { ...RUN, agentId: "", state: "done", createdAt: 0, updatedAt: 0 };
    const messages = opts.end ? terminalMessages(subjects, RUN, event, seq, final) : [agentEventMessage(subjects, RUN, event, seq)];
    for (const m of messages) {
      if (!opts.lost) bus.publish(m.subject, m.data);
      if (!m.subject.endsWith(".final")) log.kept.push(decodeClientEvent(m.data));
    }
  };
  const register = () => registry.create({ ...RUN, agentId: "", state: "running", createdAt: 0, updatedAt: 0 });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  return { router, subs, log, ctx, seqs, data, emit, register, registry, settle, closeSocket: () => closers.forEach((c) => c()), bus };
}

describe("AgentSubscriptions", () => {
  const routers: RunEventRouter[] = [];
  afterEach(() => {
    for (const r of routers.splice(0)) r.close();
  });

  it("keeps a corrupt kept event's place in the order but sends it to no one, and says so in the log", async () => {
    const lines: string[] = [];
    const s = setup(createLogger({ service: "test", level: "error", destination: { write: (line: string) => lines.push(line) } }));
    routers.push(s.router);
    await s.register();
    for (let i = 0; i < 3; i++) s.emit();
    s.log.kept[1] = { ...s.log.kept[1]!, payloadJson: Buffer.from("{not json") };
    expect(await s.subs.subscribe({ runId: "r1", afterSeq: 0 }, s.ctx)).toMatchObject({ subscribed: true, lastSeq: 3 });
    s.emit({ end: true });
    await s.settle();
    expect(s.seqs).toEqual([1, 3, 4]);
    expect(lines.map((line) => JSON.parse(line) as { msg: string; seq: number })).toEqual([
      expect.objectContaining({ msg: "a run event that is not an agent event payload: not sent", seq: 2 }),
    ]);
  });

  it("resumes after a seq: the kept events, then the live ones, even when the store is a moment behind", async () => {
    const s = setup();
    routers.push(s.router);
    await s.register();
    for (let i = 0; i < 4; i++) s.emit();
    // The store has not taken seq 4 in yet when it is first read, and 5 and 6 come live meanwhile.
    s.log.holdNext(3);
    const answer = s.subs.subscribe({ runId: "r1", afterSeq: 1 }, s.ctx);
    await waitFor(() => (s.log.reads === 1 ? true : undefined), { timeoutMs: 2_000, what: "the first read" });
    s.emit();
    s.emit();
    await s.settle();
    expect(s.seqs).toEqual([]);
    s.log.release();
    expect(await answer).toMatchObject({ subscribed: true, runId: "r1", status: "running", lastSeq: 6 });
    s.emit({ end: true });
    await s.settle();
    expect(s.seqs).toEqual([2, 3, 4, 5, 6, 7]);
    expect(s.log.reads).toBe(2);
    // The subscription ended with its run.
    expect(s.subs.unsubscribe({ runId: "r1" }, s.ctx)).toMatchObject({ unsubscribed: false });
    expect(s.router.subscriptions()).toEqual([subjects.runEvents({ startedBy: "here" })]);
  });

  it("says so when the events after the seq are no longer kept", async () => {
    const s = setup();
    routers.push(s.router);
    await s.register();
    for (let i = 0; i < 5; i++) s.emit();
    s.log.kept.splice(0, 3);
    const refused = await s.subs.subscribe({ runId: "r1", afterSeq: 1 }, s.ctx).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ code: "NOT_FOUND", details: { runId: "r1", afterSeq: 1 } });
    // Nothing was left subscribed.
    expect(s.router.subscriptions()).toEqual([subjects.runEvents({ startedBy: "here" })]);
  });

  it("mends a gap in the live events from the store", async () => {
    const s = setup();
    routers.push(s.router);
    await s.register();
    expect(await s.subs.subscribe({ runId: "r1" }, s.ctx)).toMatchObject({ subscribed: true });
    s.emit();
    // Seq 2 reaches the store but not this edge (its bus connection dropped it).
    s.emit({ lost: true });
    s.emit();
    s.emit();
    await s.settle();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(s.seqs).toEqual([1, 2, 3, 4]);
  });

  it("replays a run that is over and keeps nothing subscribed", async () => {
    const s = setup();
    routers.push(s.router);
    await s.register();
    s.emit();
    s.emit();
    s.emit({ end: true });
    await s.registry.finish((await s.registry.get("r1"))!, { payloads: [] });
    expect(await s.subs.subscribe({ runId: "r1", afterSeq: 3 }, s.ctx)).toMatchObject({ subscribed: false, status: "ok", lastSeq: 3 });
    expect(s.seqs).toEqual([]);
    expect(await s.subs.subscribe({ runId: "r1", afterSeq: 1 }, s.ctx)).toMatchObject({ subscribed: false, status: "ok", lastSeq: 3 });
    expect(s.seqs).toEqual([2, 3]);
    expect(await s.subs.subscribe({ runId: "r1" }, s.ctx)).toMatchObject({ subscribed: false, status: "ok" });
    expect(s.router.subscriptions()).toEqual([subjects.runEvents({ startedBy: "here" })]);
  });

  it("withholds a run's server-side failure words from a node, live and resumed from the store", async () => {
    const failure = { phase: "error", error: "cannot reach fake at http://10.0.0.7:8000/v1", code: "MODEL_ERROR", requestId: "req_0af7651916cd43dd8448eb211c80319c" };
    const generic = { ...failure, error: "the model provider failed (request id req_0af7651916cd43dd8448eb211c80319c)" };
    const live = setup();
    routers.push(live.router);
    await live.register();
    expect(await live.subs.subscribe({ runId: "r1" }, live.ctx)).toMatchObject({ subscribed: true });
    live.emit();
    live.emit({ end: true, failure });
    await live.settle();
    expect(live.data.at(-1)).toEqual(generic);

    const resumed = setup();
    routers.push(resumed.router);
    await resumed.register();
    resumed.emit();
    resumed.emit({ end: true, failure });
    await resumed.registry.finish((await resumed.registry.get("r1"))!, { error: { code: "MODEL_ERROR", message: failure.error } });
    expect(await resumed.subs.subscribe({ runId: "r1", afterSeq: 0 }, resumed.ctx)).toMatchObject({ subscribed: false, status: "error" });
    expect(resumed.data).toEqual([{ text: "t1" }, generic]);
  });

  it("holds at most maxPerConnection subscriptions per socket, and refuses one more by name", async () => {
    const s = setup();
    routers.push(s.router);
    for (const key of ["k:1", "k:2", "k:3"]) expect(await s.subs.subscribe({ sessionKey: key }, s.ctx)).toMatchObject({ subscribed: true });
    const refused = await s.subs.subscribe({ sessionKey: "k:4" }, s.ctx).catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: "RATE_LIMITED", details: { limit: "maxSubscriptionsPerConnection", max: 3 } });
    // Renewing a held one is no new subscription; freeing one makes room.
    expect(await s.subs.subscribe({ sessionKey: "k:1" }, s.ctx)).toMatchObject({ subscribed: true });
    expect(s.subs.unsubscribe({ sessionKey: "k:2" }, s.ctx)).toMatchObject({ unsubscribed: true });
    expect(await s.subs.subscribe({ sessionKey: "k:4" }, s.ctx)).toMatchObject({ subscribed: true, sessionKey: "k:4" });
  });

  it("ends every subscription of a socket when it closes", async () => {
    const s = setup();
    routers.push(s.router);
    await s.register();
    await s.subs.subscribe({ runId: "r1" }, s.ctx);
    await s.subs.subscribe({ sessionKey: "k:2" }, s.ctx);
    expect(s.router.subscriptions().length).toBeGreaterThan(1);
    s.closeSocket();
    expect(s.router.subscriptions()).toEqual([subjects.runEvents({ startedBy: "here" })]);
  });
});
