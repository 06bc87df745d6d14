import { InProcessBus } from "@gw/bus";
import type { AgentEventPayload, RunRequest } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { type Bus, createSubjects as subjectsFor } from "@gw/bus";
import { agentEventMessage, InProcessRunQueue, type RunAddress, RunRegistry, TERMINAL_SEQ, terminalMessages } from "@gw/runs";
import { createMemoryFastStore, type FastStore } from "@gw/store";
import { waitFor } from "@gw/testing";
import { afterEach, describe, expect, it } from "vitest";
import { EventHub, type EventTarget } from "../events/event-hub.js";
import { RunClient } from "./run-client.js";
import { RunEventRouter } from "../events/run-event-router.js";

const subjects = subjectsFor("gw");

/** Publishes one run event as a runner does (the terminal one with its record when `final` is given). */
function emitEvent(bus: Pick<Bus, "publish">, run: RunAddress, seq: number, stream: AgentEventPayload["stream"], data: Record<string, unknown>, final?: object): void {
  const event = { runId: run.runId, stream, data };
  const messages = final ? terminalMessages(subjects, run, event, seq, final as never) : [agentEventMessage(subjects, run, event, seq)];
  for (const m of messages) bus.publish(m.subject, m.data);
}
const logger = createLogger({ service: "test", level: "silent" });

/** A FastStore whose value writes land only when released: a registration slower than its run. */
function slowWrites(store: FastStore): { store: FastStore; release(): void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const values = {
    ...store.values,
    set: async (...args: Parameters<FastStore["values"]["set"]>) => {
      await gate;
      return store.values.set(...args);
    },
  };
  return { store: { ...store, values } as FastStore, release };
}

function socket(id: string, role: "control" | "webchat"): EventTarget & { frames: string[] } {
  const frames: string[] = [];
  return { id, role, frames, accepts: () => true, seesErrorDetail: () => role === "control", sendText: (frame) => frames.push(String(frame)) };
}

describe("RunClient", () => {
  const routers: RunEventRouter[] = [];
  afterEach(() => {
    for (const r of routers.splice(0)) r.close();
  });
  /** An edge's run side on `bus`: its socket hub, event router and run client. */
  const edgeRuns = (bus: Bus, registry: RunRegistry, queue: InProcessRunQueue) => {
    const hub = new EventHub({ bus, subjects, logger });
    const router = new RunEventRouter({ bus, subjects, hub, logger, edgeId: "e" });
    routers.push(router);
    return { hub, client: new RunClient({ bus, subjects, registry, queue, router, edgeId: "e", logger, defaultTimeoutSeconds: 30 }) };
  };

  it("hands a run's starter the events that arrived before its registration did, once and in order", async () => {
    const bus = new InProcessBus();
    const { store, release } = slowWrites(createMemoryFastStore());
    const registry = new RunRegistry(store);
    const queue = new InProcessRunQueue();
    const { hub, client } = edgeRuns(bus, registry, queue);
    const starter = socket("s1", "webchat");
    hub.add(starter);

    // A runner faster than the registration: it answers the run as soon as it is dispatched,
    // then lets the registration land.
    queue.consume(
      async (req: RunRequest) => {
        const emit = (seq: number, stream: AgentEventPayload["stream"], data: Record<string, unknown>, final?: object) =>
          emitEvent(bus, req, seq, stream, data, final);
        emit(1, "lifecycle", { phase: "start" });
        emit(2, "assistant", { type: "text", text: "hi" });
        const final = { runId: req.runId, sessionKey: req.sessionKey, agentId: "", state: "done", edgeId: "e", createdAt: 0, updatedAt: 0, payloads: [{ type: "text", text: "hi" }] };
        emit(3, "lifecycle", { phase: "end" }, final);
        await bus.flush();
        release();
      },
      { maxConcurrent: 1 },
    );

    const seen: string[] = [];
    const record = await client.run(
      { message: "x", sessionKey: "t:1", runId: "run-early" },
      { targetId: "s1", onEvent: (p) => seen.push(`${p.stream}:${String(p.data.phase ?? p.data.text)}`) },
    );
    expect(record).toMatchObject({ state: "done", payloads: [{ text: "hi" }] });
    expect(seen).toEqual(["lifecycle:start", "assistant:hi", "lifecycle:end"]);
    const frames = starter.frames.map((f) => JSON.parse(f) as { event: string; payload: AgentEventPayload });
    expect(frames.map((f) => `${f.payload.stream}:${String(f.payload.data.phase ?? f.payload.data.text)}`)).toEqual([
      "lifecycle:start",
      "assistant:hi",
      "lifecycle:end",
    ]);
    expect(frames.every((f) => f.event === "agent" && !("id" in f))).toBe(true);
  });

  it("shows a run whose runId is taken none of the other run's events", async () => {
    const bus = new InProcessBus();
    const registry = new RunRegistry(createMemoryFastStore());
    const { hub, client } = edgeRuns(bus, registry, new InProcessRunQueue());
    await registry.create({ runId: "taken", sessionKey: "t:2", agentId: "", state: "running", edgeId: "e", createdAt: 0, updatedAt: 0 });
    const late = socket("s2", "webchat");
    hub.add(late);
    const seen: string[] = [];
    const attempt = client.run({ message: "x", sessionKey: "t:2", runId: "taken" }, { targetId: "s2", onEvent: (p) => seen.push(p.stream) });
    emitEvent(bus, { runId: "taken", sessionKey: "t:2", edgeId: "e" }, 1, "assistant", { type: "text", text: "secret" });
    await expect(attempt).rejects.toMatchObject({ code: "CONFLICT" });
    await bus.flush();
    expect(seen).toEqual([]);
    expect(late.frames).toEqual([]);
  });

  it("reads the registry not once while a run it started sends its events", async () => {
    const bus = new InProcessBus();
    const store = createMemoryFastStore();
    const reads: string[] = [];
    const counted = { ...store, values: { ...store.values, get: (key: string) => (reads.push(key), store.values.get(key)) } };
    const registry = new RunRegistry(counted as FastStore);
    const queue = new InProcessRunQueue();
    const { client } = edgeRuns(bus, registry, queue);
    queue.consume(
      async (req: RunRequest) => {
        const final = { runId: req.runId, sessionKey: req.sessionKey, agentId: "", state: "done", edgeId: "e", createdAt: 0, updatedAt: 0, payloads: [{ type: "text", text: "ok" }] };
        await new Promise((resolve) => setTimeout(resolve, 20));
        emitEvent(bus, req, TERMINAL_SEQ, "lifecycle", { phase: "end" }, final);
      },
      { maxConcurrent: 1 },
    );

    const record = await client.run({ message: "x", sessionKey: "t:3", runId: "run-quiet" }, {});
    expect(record).toMatchObject({ state: "done", payloads: [{ text: "ok" }] });
    // Subscribed before dispatch, the edge hears the end; a registry read would be a wasted round trip.
    expect(reads.filter((key) => key.startsWith("run:"))).toEqual([]);
  });

  it("ends a run it cannot dispatch with UNAVAILABLE at once, even when the bus carries nothing", async () => {
    const inner = new InProcessBus();
    // The bus that failed the dispatch delivers no events either: the end must not wait for one.
    const bus = Object.assign(Object.create(inner) as InProcessBus, { publish: () => undefined });
    const store = createMemoryFastStore();
    const reads: string[] = [];
    const counted = { ...store, values: { ...store.values, get: (key: string) => (reads.push(key), store.values.get(key)) } };
    const registry = new RunRegistry(counted as FastStore);
    const queue = Object.assign(new InProcessRunQueue(), {
      submit: () => Promise.reject(new Error("no NATS")),
    });
    const { client } = edgeRuns(bus, registry, queue);

    const record = await client.run({ message: "x", sessionKey: "t:4", runId: "run-undispatched" }, {});
    expect(record).toMatchObject({ state: "error", error: { code: "UNAVAILABLE" } });
    // Handed over by the dispatch path itself, not found by the registry poll a second later.
    expect(reads.filter((key) => key.startsWith("run:"))).toEqual([]);
    expect(await registry.get("run-undispatched")).toMatchObject({ state: "error" });
  });

  it("starts a run with no subscribe or unsubscribe on the bus, and follows a run from elsewhere with both", async () => {
    const inner = new InProcessBus();
    const calls: string[] = [];
    const bus = Object.assign(Object.create(inner) as InProcessBus, {
      subscribe: (subject: string, handler: (data: Uint8Array) => void) => {
        calls.push(`subscribe ${subject}`);
        const unsubscribe = inner.subscribe(subject, handler);
        return () => {
          calls.push(`unsubscribe ${subject}`);
          unsubscribe();
        };
      },
    });
    const registry = new RunRegistry(createMemoryFastStore());
    const queue = new InProcessRunQueue();
    const { client } = edgeRuns(bus, registry, queue);
    const end = (req: Pick<RunRequest, "runId" | "sessionKey" | "edgeId">) => {
      const final = { runId: req.runId, sessionKey: req.sessionKey, agentId: "", state: "done", edgeId: req.edgeId, createdAt: 0, updatedAt: 0 };
      emitEvent(inner, req, TERMINAL_SEQ, "lifecycle", { phase: "end" }, final);
    };
    queue.consume(async (req: RunRequest) => void setTimeout(() => end(req), 10), { maxConcurrent: 1 });
    // The edge's own runs have one subscription for its lifetime.
    expect(calls).toEqual([`subscribe ${subjects.runEvents({ startedBy: "e" })}`]);
    calls.length = 0;

    expect(await client.run({ message: "x", sessionKey: "t:5", runId: "run-here" }, {})).toMatchObject({ state: "done" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual([]);

    // A run another edge started: agent.wait subscribes to it, and lets go after the answer.
    await registry.create({ runId: "run-there", sessionKey: "t:6", agentId: "", state: "running", edgeId: "other", createdAt: 0, updatedAt: Date.now() });
    await registry.heartbeat("run-there", "runner-elsewhere");
    const waited = client.wait("run-there", 5_000);
    await waitFor(() => (calls.length > 0 ? true : undefined), { timeoutMs: 2_000, what: "the wait's subscription" });
    end({ runId: "run-there", sessionKey: "t:6", edgeId: "other" });
    expect(await waited).toMatchObject({ state: "done" });
    const there = subjects.runEvents({ runId: "run-there" });
    expect(calls).toEqual([`subscribe ${there}`]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual([`subscribe ${there}`, `unsubscribe ${there}`]);
  });

  it("dispatches a fractional timeoutSeconds rounded up to whole seconds, never less than asked", async () => {
    const bus = new InProcessBus();
    const registry = new RunRegistry(createMemoryFastStore());
    const queue = new InProcessRunQueue();
    const { client } = edgeRuns(bus, registry, queue);
    const dispatched: number[] = [];
    queue.consume(
      async (req: RunRequest) => {
        dispatched.push(req.timeoutSeconds);
        const final = { runId: req.runId, sessionKey: req.sessionKey, agentId: "", state: "done", edgeId: "e", createdAt: 0, updatedAt: 0 };
        setTimeout(() => emitEvent(bus, req, TERMINAL_SEQ, "lifecycle", { phase: "end" }, final), 10);
      },
      { maxConcurrent: 1 },
    );
    for (const [n, timeoutSeconds] of [1.5, 0.2, 3, undefined].entries()) {
      const run = await client.run({ message: "x", sessionKey: "t:7", runId: `run-timeout-${n}`, timeoutSeconds }, {});
      expect(run).toMatchObject({ state: "done" });
    }
    // 0 is "the runner's default".
    expect(dispatched).toEqual([2, 1, 3, 0]);
  });
});
