import { describe, expect, it } from "vitest";
import { InProcessRunQueue } from "./in-process-run-queue.js";
import { describeRunQueueContract, runRequest, ScriptedRunner } from "./run-queue.contract.js";

describeRunQueueContract(
  "in-process",
  async () => {
    const queue = new InProcessRunQueue();
    return { queue, peer: queue, dispose: () => queue.close() };
  },
  { fifo: true },
);

describe("InProcessRunQueue", () => {
  it("keeps serving the other consumers when one is stopped twice", async () => {
    const queue = new InProcessRunQueue();
    const a = new ScriptedRunner();
    const b = new ScriptedRunner();
    const first = queue.consume(a.handler, { maxConcurrent: 1 });
    const second = queue.consume(b.handler, { maxConcurrent: 1 });
    await first.stop();
    await first.stop();
    await queue.submit(runRequest("after-double-stop"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(b.taken).toEqual(["after-double-stop"]);
    b.finishAll();
    await second.stop();
    await queue.close();
  });

  it("drops runs still queued when closed", async () => {
    const queue = new InProcessRunQueue();
    await queue.submit(runRequest("dropped"));
    await queue.close();
    const runner = new ScriptedRunner();
    const consumer = queue.consume(runner.handler, { maxConcurrent: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(runner.taken).toEqual([]);
    await consumer.stop();
  });
});
