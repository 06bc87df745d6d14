import { describe, expect, it } from "vitest";
import { InProcessRunQueue } from "./in-process-run-queue.js";
import { RunStarts } from "./run-starts.js";
import { runRequest } from "./run-request.js";

/** Resolves after `n` turns of the event loop (each a setImmediate, as the pacer's). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("RunStarts", () => {
  it("starts up to its share of a turn at once and the rest in later turns, in order", async () => {
    const starts = new RunStarts(4);
    const started: number[] = [];
    for (let i = 0; i < 10; i++) starts.start(() => started.push(i));
    expect(started).toEqual([0, 1, 2, 3]);
    expect(starts.pending).toBe(6);
    await turns(1);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await turns(1);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(starts.pending).toBe(0);
  });

  it("queues a start behind waiting ones even when its turn has room", async () => {
    const starts = new RunStarts(2);
    const started: string[] = [];
    for (const name of ["a", "b", "c"]) starts.start(() => started.push(name));
    await turns(1);
    // This turn started "c" and has room for one more, but nothing jumps the line.
    starts.start(() => started.push("d"));
    starts.start(() => started.push("e"));
    expect(started).toEqual(["a", "b", "c", "d"]);
    await turns(1);
    expect(started).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("gives each turn its whole share again once the queue is empty", async () => {
    const starts = new RunStarts(3);
    const started: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) starts.start(() => started.push(round * 3 + i));
      expect(started).toHaveLength((round + 1) * 3);
      await turns(2);
    }
  });

  it("never starts more than its share between two turns, whatever the bursts", async () => {
    const starts = new RunStarts(5);
    let inTurn = 0;
    let most = 0;
    let done = 0;
    let marking = true;
    // A turn marker of its own: queued after the pacer's immediate, it runs in the same check phase.
    const mark = () => {
      inTurn = 0;
      if (marking) setImmediate(mark);
    };
    setImmediate(mark);
    for (let burst = 0; burst < 20; burst++) {
      for (let i = 0; i < (burst * 7) % 13; i++)
        starts.start(() => {
          inTurn++;
          most = Math.max(most, inTurn);
          done++;
        });
      await turns(burst % 3);
    }
    await turns(40);
    marking = false;
    expect(done).toBe(Array.from({ length: 20 }, (_, b) => (b * 7) % 13).reduce((a, b) => a + b, 0));
    expect(most).toBeLessThanOrEqual(5);
    expect(starts.pending).toBe(0);
  });
});

describe("a burst of submitted runs", () => {
  it("starts every run, in order, over several turns of the event loop", async () => {
    const queue = new InProcessRunQueue();
    const started: string[] = [];
    const consumer = queue.consume(
      async (request, taken) => {
        taken();
        started.push(request.runId);
      },
      { maxConcurrent: 100 },
    );
    const ids = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    for (const id of ids) await queue.submit(runRequest({ runId: id, sessionKey: "s", message: "hi", edgeId: "edge-1" }));
    // Each submit awaits a microtask only: all 40 came in one turn, and only a turn's share started.
    expect(started.length).toBeLessThan(ids.length);
    expect(started.length).toBeGreaterThan(0);
    await turns(5);
    expect(started).toEqual(ids);
    await consumer.stop();
    await queue.close();
  });
});
