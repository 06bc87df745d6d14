import { type Bus, createSubjects } from "@gw/bus";
import { decodeClientEvent, type RunRecord } from "@gw/contracts";
import { finalRecordOf } from "@gw/runs";
import { describe, expect, it } from "vitest";
import { RunEventPublisher } from "./run-event-publisher.js";

/** A bus that records each publish call and the macrotask turn it happened in. */
function recordingBus() {
  let turn = 0;
  const published: Array<{ turn: number; seq: number; subject: string; final: boolean }> = [];
  const bus = {
    publish: (subject: string, data: Uint8Array) => {
      const event = decodeClientEvent(data);
      published.push({ turn, seq: event.seq, subject, final: finalRecordOf(event) !== undefined });
    },
  } as unknown as Bus;
  const nextTurn = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    turn += 1;
  };
  return { bus, published, nextTurn };
}

const subjects = createSubjects("gw");
const FINAL: RunRecord = {
  runId: "r1",
  sessionKey: "s",
  agentId: "main",
  state: "done",
  edgeId: "e",
  createdAt: 1,
  updatedAt: 2,
  payloads: [{ type: "text", text: "hi" }],
};

describe("RunEventPublisher", () => {
  it("sends the events of every run of one turn in one synchronous stretch, which the bus client writes at once", async () => {
    // A stretch ends at the next microtask checkpoint: NATS writes what was published before it.
    let stretch = 0;
    let open = false;
    const published: Array<{ stretch: number; runId: string }> = [];
    const bus = {
      publish: (_subject: string, data: Uint8Array) => {
        if (!open) {
          open = true;
          stretch += 1;
          queueMicrotask(() => (open = false));
        }
        published.push({ stretch, runId: decodeClientEvent(data).runId });
      },
    } as unknown as Bus;
    const runs = ["r1", "r2", "r3"].map((runId) => new RunEventPublisher(bus, subjects, { runId, sessionKey: `s-${runId}`, edgeId: "e1" }));
    for (const run of runs) run.emit("assistant", { type: "text", text: "a" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(published).toEqual([
      { stretch: 1, runId: "r1" },
      { stretch: 1, runId: "r2" },
      { stretch: 1, runId: "r3" },
    ]);
  });

  it("sends the events of one I/O turn together, after the turn, in order", async () => {
    const { bus, published, nextTurn } = recordingBus();
    const events = new RunEventPublisher(bus, subjects, { runId: "r1", sessionKey: "s", edgeId: "e1" });
    events.emit("lifecycle", { phase: "start" });
    events.emit("assistant", { text: "a" });
    events.emit("assistant", { text: "b" });
    expect(published).toEqual([]);
    await nextTurn();
    events.emit("assistant", { text: "c" });
    await nextTurn();
    expect(published.map((p) => [p.seq, p.turn])).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 1],
    ]);
    const run = { startedBy: "e1", sessionKey: "s", runId: "r1" };
    expect(published.map((p) => p.subject)).toEqual([
      subjects.runEvents({ ...run, part: "life" }),
      subjects.runEvents({ ...run, part: "out" }),
      subjects.runEvents({ ...run, part: "out" }),
      subjects.runEvents({ ...run, part: "out" }),
    ]);
  });

  it("sends the text chunks that follow each other in one turn as one event, and each turn's chunks as they came", async () => {
    const sent: Array<{ seq: number; data: Record<string, unknown> }> = [];
    const bus = {
      publish: (_subject: string, data: Uint8Array) => {
        const payload = JSON.parse(Buffer.from(decodeClientEvent(data).payloadJson).toString("utf8")) as { seq: number; data: Record<string, unknown> };
        sent.push({ seq: payload.seq, data: payload.data });
      },
    } as unknown as Bus;
    const events = new RunEventPublisher(bus, subjects, { runId: "r1", sessionKey: "s", edgeId: "e1" });
    events.emit("assistant", { type: "text", text: "a" });
    events.emit("assistant", { type: "text", text: "b" });
    events.emit("tool", { phase: "start", name: "t" });
    events.emit("assistant", { type: "text", text: "c" });
    events.emit("assistant", { type: "text", text: "d", extra: true });
    await new Promise((resolve) => setImmediate(resolve));
    events.emit("assistant", { type: "text", text: "e" });
    events.emit("lifecycle", { phase: "end" }, FINAL);
    expect(sent).toEqual([
      { seq: 1, data: { type: "text", text: "ab" } },
      { seq: 2, data: { phase: "start", name: "t" } },
      { seq: 3, data: { type: "text", text: "c" } },
      { seq: 4, data: { type: "text", text: "d", extra: true } },
      { seq: 5, data: { type: "text", text: "e" } },
      { seq: 6, data: { phase: "end" } },
      { seq: 6, data: { phase: "end" } },
    ]);
  });

  it("sends the terminal event at once, after whatever is pending, its record just before it on the final subject", async () => {
    const { bus, published, nextTurn } = recordingBus();
    const events = new RunEventPublisher(bus, subjects, { runId: "r1", sessionKey: "s", edgeId: "e1" });
    events.emit("assistant", { text: "a" });
    events.emit("lifecycle", { phase: "end" }, FINAL);
    expect(published.map((p) => [p.seq, p.final, p.subject.split(".").at(-1)])).toEqual([
      [1, false, "out"],
      [2, true, "final"],
      [2, false, "life"],
    ]);
    await nextTurn();
    expect(published).toHaveLength(3);
  });

  it("holds every event until release, and drop discards them", async () => {
    const { bus, published, nextTurn } = recordingBus();
    const kept = new RunEventPublisher(bus, subjects, { runId: "r1", sessionKey: "s", edgeId: "e1" }, { held: true });
    kept.emit("lifecycle", { phase: "start" });
    kept.emit("assistant", { text: "a" });
    await nextTurn();
    expect(published).toEqual([]);
    kept.release();
    expect(published.map((p) => p.seq)).toEqual([1, 2]);
    kept.emit("assistant", { text: "b" });
    await nextTurn();
    expect(published.map((p) => p.seq)).toEqual([1, 2, 3]);

    const dropped = new RunEventPublisher(bus, subjects, { runId: "r2", sessionKey: "s", edgeId: "e1" }, { held: true });
    dropped.emit("lifecycle", { phase: "start" });
    dropped.drop();
    await nextTurn();
    expect(published.map((p) => p.seq)).toEqual([1, 2, 3]);
  });
});
