import { createSubjects, InProcessBus } from "@gw/bus";
import type { AgentEventPayload } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { agentEventMessage, type RunAddress, terminalMessages } from "@gw/runs";
import { afterEach, describe, expect, it } from "vitest";
import { EventHub, type EventTarget } from "./event-hub.js";
import { RunEventRouter } from "./run-event-router.js";

const subjects = createSubjects("gw");
const logger = createLogger({ service: "test", level: "silent" });

type Seen = { runId: string; seq: number; stream: string };

function socket(id: string, role: "control" | "node" | "webchat"): EventTarget & { events: Seen[]; payloads: AgentEventPayload[] } {
  const events: Seen[] = [];
  const payloads: AgentEventPayload[] = [];
  return {
    id,
    role,
    events,
    payloads,
    accepts: () => true,
    seesErrorDetail: () => role === "control",
    sendText: (frame) => {
      const { payload } = JSON.parse(String(frame)) as { payload: AgentEventPayload };
      events.push({ runId: payload.runId, seq: payload.seq, stream: payload.stream });
      payloads.push(payload);
    },
  };
}

/** An edge's router on a bus shared with a "runner" that publishes, counting its deliveries. */
function edge(edgeId: string, bus: InProcessBus) {
  let delivered = 0;
  const counting = Object.assign(Object.create(bus) as InProcessBus, {
    subscribe: (subject: string, handler: (data: Uint8Array, subject: string) => void) =>
      bus.subscribe(subject, (data, s) => {
        delivered += 1;
        handler(data, s);
      }),
  });
  const hub = new EventHub({ bus: counting, subjects, logger });
  const router = new RunEventRouter({ bus: counting, subjects, hub, logger, edgeId });
  return { hub, router, delivered: () => delivered };
}

/** Publishes a run of `outputs` assistant events between lifecycle start and end. */
async function runOf(bus: InProcessBus, run: RunAddress, outputs: number): Promise<number> {
  let seq = 0;
  const emit = (stream: AgentEventPayload["stream"], data: Record<string, unknown>) => {
    const m = agentEventMessage(subjects, run, { runId: run.runId, stream, data }, ++seq);
    bus.publish(m.subject, m.data);
  };
  emit("lifecycle", { phase: "start" });
  for (let i = 0; i < outputs; i++) emit("assistant", { type: "text", text: `t${i}` });
  const final = { runId: run.runId, sessionKey: run.sessionKey, agentId: "", state: "done" as const, edgeId: run.edgeId, createdAt: 0, updatedAt: 0 };
  for (const m of terminalMessages(subjects, run, { runId: run.runId, stream: "lifecycle", data: { phase: "end" } }, ++seq, final)) {
    bus.publish(m.subject, m.data);
  }
  await bus.flush();
  return seq;
}

describe("RunEventRouter", () => {
  const routers: RunEventRouter[] = [];
  afterEach(() => {
    for (const r of routers.splice(0)) r.close();
  });

  it("gives control connections every run's lifecycle, and the whole stream only to who follows it", async () => {
    const bus = new InProcessBus();
    const a = edge("a", bus);
    const b = edge("b", bus);
    routers.push(a.router, b.router);
    const starter = socket("s", "node");
    const controlA = socket("ca", "control");
    const controlB = socket("cb", "control");
    a.hub.add(starter);
    a.hub.add(controlA);
    b.hub.add(controlB);
    a.router.followNow("r1", { targetId: "s" }, { startedBy: "a" });
    await runOf(bus, { runId: "r1", sessionKey: "k:1", edgeId: "a" }, 5);
    expect(starter.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(controlA.events.map((e) => e.stream)).toEqual(["lifecycle", "lifecycle"]);
    expect(controlB.events.map((e) => e.stream)).toEqual(["lifecycle", "lifecycle"]);
    // Edge b heard the two lifecycle events and nothing else: no output, no record.
    expect(b.delivered()).toBe(2);
    expect(a.delivered()).toBe(8);
  });

  it("counts interest: subscriptions come with the first follower and go with the last", async () => {
    const bus = new InProcessBus();
    const b = edge("b", bus);
    routers.push(b.router);
    const own = subjects.runEvents({ startedBy: "b" });
    expect(b.router.subscriptions()).toEqual([own]);
    const one = b.router.followNow("r1", {}, { startedBy: "a" });
    const two = b.router.followNow("r1", {}, { startedBy: "a" });
    const run = subjects.runEvents({ runId: "r1" });
    expect(b.router.subscriptions()).toEqual([own, run].sort());
    one();
    expect(b.router.subscriptions()).toEqual([own, run].sort());
    two();
    expect(b.router.subscriptions()).toEqual([own]);

    const w1 = b.router.watchSession("x", "k:1");
    const w2 = b.router.watchSession("y", "k:1");
    w1();
    expect(b.router.subscriptions()).toContain(subjects.runEvents({ sessionKey: "k:1", part: "out" }));
    w2();
    const fire = b.router.addFirehose("x");
    expect(b.router.subscriptions()).toEqual(
      [subjects.runEvents({ part: "life" }), subjects.runEvents({ part: "out" }), subjects.runEvents({ startedBy: "b", part: "final" })].sort(),
    );
    fire();
    expect(b.router.subscriptions()).toEqual([own]);
  });

  it("with a firehose on the starting edge, takes each event of its own run off the bus once", async () => {
    const bus = new InProcessBus();
    const a = edge("a", bus);
    routers.push(a.router);
    const starter = socket("s", "node");
    const dashboard = socket("d", "control");
    a.hub.add(starter);
    a.hub.add(dashboard);
    a.router.addFirehose("d");
    a.router.followNow("r1", { targetId: "s" }, { startedBy: "a" });
    const events = await runOf(bus, { runId: "r1", sessionKey: "k:1", edgeId: "a" }, 4);
    // Every event once, and the run's record once (for the edge's own waiters).
    expect(a.delivered()).toBe(events + 1);
    expect(starter.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(dashboard.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("sends a session subscriber the runs of its session, and a socket that is several of these each event once", async () => {
    const bus = new InProcessBus();
    const a = edge("a", bus);
    const b = edge("b", bus);
    routers.push(a.router, b.router);
    const watcher = socket("w", "control");
    b.hub.add(watcher);
    b.router.watchSession("w", "k:1");
    b.router.addFirehose("w");
    b.router.followNow("r1", { targetId: "w" }, { startedBy: "a", sessionKey: "k:1" });
    await runOf(bus, { runId: "r1", sessionKey: "k:1", edgeId: "a" }, 3);
    await runOf(bus, { runId: "r2", sessionKey: "k:2", edgeId: "a" }, 1);
    expect(watcher.events.filter((e) => e.runId === "r1").map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(watcher.events.filter((e) => e.runId === "r2").map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it("shows a run's server-side failure in its own words to control only; others get the catalogue's and the request id", async () => {
    const bus = new InProcessBus();
    const a = edge("a", bus);
    routers.push(a.router);
    const starter = socket("s", "webchat");
    const watcher = socket("w", "node");
    const operator = socket("c", "control");
    for (const target of [starter, watcher, operator]) a.hub.add(target);
    a.router.followNow("r1", { targetId: "s" }, { startedBy: "a" });
    a.router.watchSession("w", "k:1");
    const run = { runId: "r1", sessionKey: "k:1", edgeId: "a" };
    const start = agentEventMessage(subjects, run, { runId: "r1", stream: "lifecycle", data: { phase: "start" } }, 1);
    bus.publish(start.subject, start.data);
    const words = "cannot reach fake at http://10.0.0.7:8000/v1/chat/completions: connect ECONNREFUSED";
    const data = { phase: "error", error: words, code: "MODEL_ERROR", requestId: "req_0af7651916cd43dd8448eb211c80319c" };
    const final = { runId: "r1", sessionKey: "k:1", agentId: "", state: "error" as const, edgeId: "a", createdAt: 0, updatedAt: 0 };
    for (const m of terminalMessages(subjects, run, { runId: "r1", stream: "lifecycle", data }, 2, final)) bus.publish(m.subject, m.data);
    await bus.flush();
    const generic = { ...data, error: "the model provider failed (request id req_0af7651916cd43dd8448eb211c80319c)" };
    expect(starter.payloads.map((p) => p.data)).toEqual([{ phase: "start" }, generic]);
    expect(watcher.payloads.at(-1)?.data).toEqual(generic);
    expect(operator.payloads.at(-1)?.data).toEqual(data);

    // The events of a run replayed to a socket that registered late go the same way; a client
    // error (ABORTED) is the gateway's own words and stays.
    const late = socket("l", "node");
    a.hub.add(late);
    const failed: AgentEventPayload = { runId: "r2", seq: 1, stream: "lifecycle", data };
    const aborted: AgentEventPayload = { runId: "r3", seq: 1, stream: "lifecycle", data: { phase: "error", error: "the run was aborted", code: "ABORTED" } };
    a.router.replay("r2", { targetId: "l" }, [failed]);
    a.router.replay("r3", { targetId: "l" }, [aborted]);
    expect(late.payloads.map((p) => p.data)).toEqual([generic, aborted.data]);
  });

  it("hands in-process followers the terminal event with the run's record", async () => {
    const bus = new InProcessBus();
    const b = edge("b", bus);
    routers.push(b.router);
    const seen: Array<[number, boolean]> = [];
    await b.router.follow("r1", { onEvent: (p, final) => seen.push([p.seq, final !== undefined]) }, { startedBy: "a" });
    await runOf(bus, { runId: "r1", sessionKey: "k:1", edgeId: "a" }, 1);
    expect(seen).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
  });
});
