import { currentRequestId, currentTrace, runInTrace, startRequestTrace } from "@gw/bus";
import { isGatewayError, type RunRequest } from "@gw/contracts";
import { waitFor } from "@gw/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunConsumer, RunHandler, RunQueue } from "./run-queue.js";

/** Two queues on one backend, as two processes would hold (the same instance in process). */
export interface RunQueuePair {
  queue: RunQueue;
  peer: RunQueue;
  dispose(): Promise<void>;
}

export interface RunQueueContractOptions {
  /** The adapter documents FIFO hand-out. */
  fifo: boolean;
}

/**
 * Bounds every wait for something to happen; JetStream pulls need a round trip or two, and on a
 * loaded CI host (two test workers beside nats-server) a stream and consumer's creation took
 * over 10 s once.
 */
const BOUND = { timeoutMs: 20_000, intervalMs: 20 };
/** How long "nothing else happens" is watched for. */
const QUIET_MS = 300;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function runRequest(runId: string): RunRequest {
  return {
    runId,
    nonce: `n-${runId}`,
    sessionKey: `s-${runId}`,
    agentId: "main",
    message: "hi",
    timeoutSeconds: 0,
    deliver: false,
    edgeId: "edge-1",
    acceptedAt: 1,
    ephemeral: false,
    history: [],
    clientTools: [],
    toolChoice: undefined,
    sampling: undefined,
    toolCallTurn: undefined,
    toolResults: [],
    attachments: [],
  };
}

/** A runner whose runs end when the test says so; records what it took and its peak load. */
export class ScriptedRunner {
  readonly taken: string[] = [];
  peak = 0;
  private readonly open = new Map<string, () => void>();

  /** Takes each run at once, as a runner whose claim succeeds at once. */
  readonly handler: RunHandler = (request, taken) =>
    new Promise<void>((resolve) => {
      taken();
      this.taken.push(request.runId);
      this.open.set(request.runId, resolve);
      this.peak = Math.max(this.peak, this.open.size);
    });

  finish(runId: string): void {
    const resolve = this.open.get(runId);
    if (resolve === undefined) throw new Error(`${runId} is not in hand`);
    this.open.delete(runId);
    resolve();
  }

  finishAll(): void {
    for (const runId of [...this.open.keys()]) this.finish(runId);
  }

  inHand(): string[] {
    return [...this.open.keys()];
  }
}

export async function expectGatewayError(work: Promise<unknown>, code: string): Promise<void> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a ${code} error, but the call succeeded`).toBeDefined();
  expect(isGatewayError(err) ? err.code : err).toBe(code);
}

export function describeRunQueueContract(
  name: string,
  setup: () => Promise<RunQueuePair>,
  opts: RunQueueContractOptions,
): void {
  describe(`RunQueue contract: ${name}`, () => {
    let pair: RunQueuePair;
    let runners: ScriptedRunner[];
    let consumers: RunConsumer[];

    const consume = (queue: RunQueue, maxConcurrent: number, runner = new ScriptedRunner()) => {
      runners.push(runner);
      const consumer = queue.consume(runner.handler, { maxConcurrent });
      consumers.push(consumer);
      return { runner, consumer };
    };
    const submitAll = async (queue: RunQueue, ids: string[]) => {
      for (const id of ids) await queue.submit(runRequest(id));
    };
    const takenCount = () => runners.reduce((n, r) => n + r.taken.length, 0);
    const waitTaken = (count: number) =>
      waitFor(() => (takenCount() >= count ? true : undefined), { ...BOUND, what: `${count} runs taken` });

    beforeEach(async () => {
      runners = [];
      consumers = [];
      pair = await setup();
    });
    afterEach(async () => {
      for (const runner of runners) runner.finishAll();
      await Promise.all(consumers.map((c) => c.stop()));
      await pair.dispose();
    });

    it("reports how many runs wait for a runner (the depth autoscaling reads)", async () => {
      expect(await pair.queue.depth()).toBe(0);
      await submitAll(pair.queue, ["depth-1", "depth-2", "depth-3"]);
      expect(await pair.peer.depth()).toBe(3);
      const a = consume(pair.queue, 1);
      await waitTaken(1);
      await waitFor(async () => ((await pair.queue.depth()) === 2 ? true : undefined), { ...BOUND, what: "depth 2" });
      a.runner.finishAll();
    });

    it("runs each run in the trace of the request that submitted it, request id included", async () => {
      const seen: Array<{ traceId: string | undefined; requestId: string | undefined }> = [];
      consumers.push(
        pair.peer.consume(
          async (_request, taken) => {
            taken();
            seen.push({ traceId: currentTrace()?.traceId, requestId: currentRequestId() });
          },
          { maxConcurrent: 1 },
        ),
      );
      // A client's trace continued at the edge: its request id is not made of its trace id.
      const trace = startRequestTrace("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
      await runInTrace(trace, () => pair.queue.submit(runRequest("traced-1")));
      await waitFor(() => (seen.length === 1 ? true : undefined), { ...BOUND, what: "the run taken" });
      expect(seen).toEqual([{ traceId: trace.traceId, requestId: trace.requestId }]);
    });

    it("hands each run to exactly one consumer", async () => {
      const a = consume(pair.queue, 4);
      const b = consume(pair.peer, 4);
      const auto = setInterval(() => {
        a.runner.finishAll();
        b.runner.finishAll();
      }, 5);
      try {
        const ids = Array.from({ length: 30 }, (_, i) => `once-${i}`);
        await submitAll(pair.queue, ids);
        await waitTaken(ids.length);
        await sleep(QUIET_MS);
        expect([...a.runner.taken, ...b.runner.taken].sort()).toEqual([...ids].sort());
      } finally {
        clearInterval(auto);
      }
    });

    it("never gives a consumer more runs than its capacity; the rest wait for a free slot", async () => {
      const a = consume(pair.queue, 2);
      const b = consume(pair.peer, 1);
      await submitAll(pair.queue, ["cap-1", "cap-2", "cap-3", "cap-4", "cap-5"]);
      await waitTaken(3);
      await sleep(QUIET_MS);
      expect(takenCount()).toBe(3);
      expect(a.runner.inHand()).toHaveLength(2);
      expect(b.runner.inHand()).toHaveLength(1);
      expect(a.consumer.active()).toBe(2);
      expect(b.consumer.active()).toBe(1);
      // No admission budget (maxLagMs): each takes its whole capacity at once.
      expect(a.consumer.admitted()).toBe(2);
      expect(b.consumer.admitted()).toBe(1);

      // Only `a` has room once one of its runs ends, so the next queued run is its.
      a.runner.finish(a.runner.inHand()[0]!);
      await waitTaken(4);
      await sleep(QUIET_MS);
      expect(takenCount()).toBe(4);
      expect(a.runner.taken).toHaveLength(3);

      b.runner.finishAll();
      await waitTaken(5);
      expect(a.runner.peak).toBeLessThanOrEqual(2);
      expect(b.runner.peak).toBe(1);
      expect([...a.runner.taken, ...b.runner.taken].sort()).toEqual(["cap-1", "cap-2", "cap-3", "cap-4", "cap-5"]);
    });

    it("frees the slot of a run whose handler fails", async () => {
      const failing: RunHandler = async () => {
        throw new Error("boom");
      };
      const seen: string[] = [];
      const consumer = pair.queue.consume(
        (req, taken) => {
          seen.push(req.runId);
          return failing(req, taken);
        },
        { maxConcurrent: 1 },
      );
      consumers.push(consumer);
      await submitAll(pair.queue, ["fail-1", "fail-2", "fail-3"]);
      await waitFor(() => (seen.length === 3 ? true : undefined), { ...BOUND, what: "three failing runs" });
      await waitFor(() => (consumer.active() === 0 ? true : undefined), BOUND);
    });

    it("keeps runs nobody has taken for a consumer that comes later", async () => {
      await submitAll(pair.queue, ["late-1", "late-2"]);
      const late = consume(pair.peer, 2);
      await waitTaken(2);
      expect([...late.runner.taken].sort()).toEqual(["late-1", "late-2"]);
    });

    it("leaves queued runs to the others when a consumer stops, and never hands out a taken run again", async () => {
      const a = consume(pair.queue, 1);
      await submitAll(pair.queue, ["stop-1", "stop-2"]);
      await waitTaken(1);
      expect(a.runner.taken).toEqual(["stop-1"]);

      let stopped = false;
      const stopping = a.consumer.stop().then(() => {
        stopped = true;
      });
      await sleep(QUIET_MS);
      expect(stopped, "stop() waits for the run in hand").toBe(false);

      const b = consume(pair.peer, 2);
      await waitFor(() => (b.runner.taken.includes("stop-2") ? true : undefined), { ...BOUND, what: "stop-2 at b" });
      await submitAll(pair.queue, ["stop-3"]);
      await waitFor(() => (b.runner.taken.includes("stop-3") ? true : undefined), { ...BOUND, what: "stop-3 at b" });
      // Acknowledged when taken: stop-1 stays with the consumer that left, never redelivered.
      expect(b.runner.taken).not.toContain("stop-1");
      expect(a.runner.taken).toEqual(["stop-1"]);

      a.runner.finish("stop-1");
      await stopping;
      expect(a.consumer.active()).toBe(0);
    });

    it.runIf(opts.fifo)("hands runs out in the order they were submitted", async () => {
      const ids = ["fifo-1", "fifo-2", "fifo-3", "fifo-4", "fifo-5"];
      await submitAll(pair.queue, ids);
      const only = consume(pair.queue, 1);
      for (let i = 1; i <= ids.length; i++) {
        await waitTaken(i);
        only.runner.finishAll();
      }
      expect(only.runner.taken).toEqual(ids);
    });

    it("refuses submits after close() with a GatewayError, and close() may be repeated", async () => {
      await pair.queue.close();
      await pair.queue.close();
      await expectGatewayError(pair.queue.submit(runRequest("closed-1")), "UNAVAILABLE");
    });
  });
}
