import { type NatsServerHandle, startNats, waitFor } from "@gw/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JetStreamRunQueue } from "./jetstream-run-queue.js";
import { describeRunQueueContract, expectGatewayError, runRequest, ScriptedRunner } from "./run-queue.contract.js";
import type { RunConsumer, RunHandler } from "./run-queue.js";

let nats: NatsServerHandle;
let counter = 0;
beforeAll(async () => {
  nats = await startNats();
});
afterAll(async () => {
  await nats?.stop();
});

const connectTo = (server: NatsServerHandle) =>
  connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
const uniquePrefix = () => `t${++counter}${Math.random().toString(36).slice(2, 6)}`;

describeRunQueueContract(
  "jetstream",
  async () => {
    // Two connections, as two processes (an edge and a runner, or two runners) would have.
    const [ncA, ncB] = await Promise.all([connectTo(nats), connectTo(nats)]);
    const prefix = uniquePrefix();
    return {
      queue: new JetStreamRunQueue(ncA, { prefix }),
      peer: new JetStreamRunQueue(ncB, { prefix }),
      async dispose() {
        const jsm = await jetstreamManager(ncA);
        await jsm.streams.delete(`${prefix}_runs`).catch(() => undefined);
        await Promise.all([ncA.close(), ncB.close()]);
      },
    };
  },
  // The port documents no order across runners; one stream happens to be FIFO, but nothing promises it.
  { fifo: false },
);

describe("JetStreamRunQueue across a NATS restart", () => {
  let nc: NatsConnection | undefined;
  afterAll(async () => {
    await nc?.close();
  });

  it("keeps queued runs in the file store and serves a runner that was running during the restart", async () => {
    nc = await connectTo(nats);
    const queue = new JetStreamRunQueue(nc, { prefix: uniquePrefix() });
    await queue.submit(runRequest("restart-1"));
    await queue.submit(runRequest("restart-2"));

    // Crash-like: the same store dir comes back with the server.
    await nats.kill();
    await expectGatewayError(queue.submit(runRequest("while-down")), "UNAVAILABLE");
    await nats.start();

    const runner = new ScriptedRunner();
    const consumer = queue.consume(runner.handler, { maxConcurrent: 4 });
    try {
      await waitFor(() => (runner.taken.includes("restart-1") && runner.taken.includes("restart-2") ? true : undefined), {
        timeoutMs: 20_000,
        what: "the runs queued before the restart",
      });
      // A publish buffered while disconnected may still land after reconnecting; its submit failed,
      // so the edge has already ended that run and the runner's claim skips it.
      expect(runner.taken.filter((id) => id !== "while-down").sort()).toEqual(["restart-1", "restart-2"]);

      await nats.kill();
      await nats.start();
      // Submitting retries until the client has reconnected; the consumer's pull loop recovers by itself.
      await waitFor(() => queue.submit(runRequest("restart-3")).then(() => true), {
        timeoutMs: 20_000,
        intervalMs: 200,
        what: "a submit after the second restart",
      });
      await waitFor(() => (runner.taken.includes("restart-3") ? true : undefined), {
        timeoutMs: 20_000,
        what: "restart-3 taken by the consumer that lived through the restart",
      });
      expect(runner.taken.filter((id) => id !== "while-down").sort()).toEqual(["restart-1", "restart-2", "restart-3"]);
    } finally {
      runner.finishAll();
      await consumer.stop();
    }
  }, 90_000);
});

describe("JetStreamRunQueue when a runner process vanishes", () => {
  it("leaves the runs it never took to the runners that remain", async () => {
    const prefix = uniquePrefix();
    const [edgeNc, goneNc, stayNc] = await Promise.all([connectTo(nats), connectTo(nats), connectTo(nats)]);
    const gone = new ScriptedRunner();
    const stay = new ScriptedRunner();
    const goneConsumer = new JetStreamRunQueue(goneNc, { prefix }).consume(gone.handler, { maxConcurrent: 1 });
    const edge = new JetStreamRunQueue(edgeNc, { prefix });
    try {
      await edge.submit(runRequest("vanish-1"));
      await waitFor(() => (gone.taken.length === 1 ? true : undefined), { timeoutMs: 10_000, what: "vanish-1 taken" });
      await edge.submit(runRequest("vanish-2"));
      // The process dies with its run in hand: no ack is outstanding, so nothing comes back.
      await goneNc.close();
      const stayConsumer = new JetStreamRunQueue(stayNc, { prefix }).consume(stay.handler, { maxConcurrent: 2 });
      await waitFor(() => (stay.taken.includes("vanish-2") ? true : undefined), { timeoutMs: 10_000, what: "vanish-2 at the survivor" });
      await edge.submit(runRequest("vanish-3"));
      await waitFor(() => (stay.taken.includes("vanish-3") ? true : undefined), { timeoutMs: 10_000, what: "vanish-3 at the survivor" });
      expect(stay.taken).not.toContain("vanish-1");
      stay.finishAll();
      await stayConsumer.stop();
    } finally {
      gone.finishAll();
      stay.finishAll();
      await goneConsumer.stop();
      await Promise.all([edgeNc.close(), stayNc.close()]);
    }
  }, 60_000);
});

describe("JetStreamRunQueue consumers", () => {
  it("take every run through one inbox for their whole life, however many runs pass", async () => {
    const prefix = uniquePrefix();
    const [edgeNc, runnerNc] = await Promise.all([connectTo(nats), connectTo(nats)]);
    const subscribed: string[] = [];
    const subscribe = runnerNc.subscribe.bind(runnerNc);
    runnerNc.subscribe = (subject, opts) => {
      subscribed.push(subject);
      return subscribe(subject, opts);
    };
    const edge = new JetStreamRunQueue(edgeNc, { prefix });
    const runner = new ScriptedRunner();
    const consumer = new JetStreamRunQueue(runnerNc, { prefix }).consume(runner.handler, { maxConcurrent: 2 });
    try {
      const ids = Array.from({ length: 30 }, (_, i) => `inbox-${i}`);
      for (const id of ids) await edge.submit(runRequest(id));
      // Two slots: the runner asks again each time one frees, 15 rounds at least.
      while (runner.taken.length < ids.length) {
        await waitFor(() => (runner.inHand().length > 0 ? true : undefined), { timeoutMs: 10_000, what: "a run in hand" });
        expect(runner.inHand().length).toBeLessThanOrEqual(2);
        runner.finishAll();
      }
      expect(runner.taken.sort()).toEqual(ids.sort());
      // The pull inbox and the JetStream API's request inbox; no subscription per pull.
      expect(subscribed.filter((s) => s.startsWith("_INBOX.")).length).toBeLessThanOrEqual(2);
      // Slots freed one by one never pile up waiting pull requests on the consumer (it takes 512 in all).
      const info = await (await jetstreamManager(edgeNc)).consumers.info(`${prefix}_runs`, "runners");
      expect(info.num_waiting).toBeLessThanOrEqual(2);
    } finally {
      runner.finishAll();
      await consumer.stop();
      await Promise.all([edgeNc.close(), runnerNc.close()]);
    }
  }, 30_000);
});

describe("JetStreamRunQueue submits", () => {
  it("publish in the caller's turn once the stream exists, and a repeated runId is queued once", async () => {
    const prefix = uniquePrefix();
    const [edgeNc, runnerNc] = await Promise.all([connectTo(nats), connectTo(nats)]);
    const edge = new JetStreamRunQueue(edgeNc, { prefix });
    const runner = new ScriptedRunner();
    try {
      await edge.submit(runRequest("turn-1"));
      const published: string[] = [];
      const publish = edgeNc.publish.bind(edgeNc);
      edgeNc.publish = (subject, data, opts) => {
        published.push(subject);
        publish(subject, data, opts);
      };
      // The edge subscribes to the run's events just before: both must be queued in one turn.
      const pending = edge.submit(runRequest("turn-2"));
      expect(published).toEqual([`${prefix}.runs.queue`]);
      await pending;
      await edge.submit(runRequest("turn-2"));

      const consumer = new JetStreamRunQueue(runnerNc, { prefix }).consume(runner.handler, { maxConcurrent: 4 });
      await waitFor(() => (runner.taken.length >= 2 ? true : undefined), { timeoutMs: 10_000, what: "both runs taken" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(runner.taken.sort()).toEqual(["turn-1", "turn-2"]);
      runner.finishAll();
      await consumer.stop();
    } finally {
      runner.finishAll();
      await Promise.all([edgeNc.close(), runnerNc.close()]);
    }
  }, 30_000);

  it("refuse with UNAVAILABLE once the stream is gone", async () => {
    const prefix = uniquePrefix();
    const nc = await connectTo(nats);
    const queue = new JetStreamRunQueue(nc, { prefix });
    try {
      await queue.submit(runRequest("gone-1"));
      await (await jetstreamManager(nc)).streams.delete(`${prefix}_runs`);
      await expectGatewayError(queue.submit(runRequest("gone-2")), "UNAVAILABLE");
    } finally {
      await nc.close();
    }
  });
});

describe("JetStreamRunQueue hand-over before and after a run is taken (ack wait 1 s)", () => {
  const ACK_WAIT_MS = 1_000;
  /** A runner that holds every run it is given, until released, and never says it has taken one. */
  const holding = () => {
    const got: string[] = [];
    const open: Array<() => void> = [];
    const handler: RunHandler = (request) => {
      got.push(request.runId);
      return new Promise<void>((resolve) => open.push(resolve));
    };
    return { got, handler, release: () => open.splice(0).forEach((resolve) => resolve()) };
  };

  it("gives a run whose runner vanished before taking it to another runner", async () => {
    const prefix = uniquePrefix();
    const [edgeNc, goneNc, stayNc] = await Promise.all([connectTo(nats), connectTo(nats), connectTo(nats)]);
    const gone = holding();
    const stay = new ScriptedRunner();
    const goneConsumer = new JetStreamRunQueue(goneNc, { prefix, ackWaitMs: ACK_WAIT_MS }).consume(gone.handler, { maxConcurrent: 1 });
    const edge = new JetStreamRunQueue(edgeNc, { prefix, ackWaitMs: ACK_WAIT_MS });
    try {
      await edge.submit(runRequest("untaken-1"));
      await waitFor(() => (gone.got.length === 1 ? true : undefined), { timeoutMs: 10_000, what: "untaken-1 at the first runner" });
      // Dies before its claim: nothing acknowledged the run.
      await goneNc.close();
      const consumer = new JetStreamRunQueue(stayNc, { prefix, ackWaitMs: ACK_WAIT_MS }).consume(stay.handler, { maxConcurrent: 1 });
      await waitFor(() => (stay.taken.includes("untaken-1") ? true : undefined), { timeoutMs: 10_000, what: "untaken-1 handed over" });
      stay.finishAll();
      await consumer.stop();
    } finally {
      stay.finishAll();
      gone.release();
      await goneConsumer.stop();
      await Promise.all([edgeNc.close(), stayNc.close()]);
    }
  }, 30_000);

  it("never hands out again a run that was taken, nor one whose live runner is slow to take it", async () => {
    const prefix = uniquePrefix();
    const [edgeNc, aNc, bNc] = await Promise.all([connectTo(nats), connectTo(nats), connectTo(nats)]);
    const taker = new ScriptedRunner();
    const slow = holding();
    const other = new ScriptedRunner();
    const edge = new JetStreamRunQueue(edgeNc, { prefix, ackWaitMs: ACK_WAIT_MS });
    const takerConsumer = new JetStreamRunQueue(aNc, { prefix, ackWaitMs: ACK_WAIT_MS }).consume(taker.handler, { maxConcurrent: 1 });
    let slowConsumer: RunConsumer | undefined;
    try {
      await edge.submit(runRequest("taken-1"));
      await waitFor(() => (taker.taken.length === 1 ? true : undefined), { timeoutMs: 10_000, what: "taken-1" });
      slowConsumer = new JetStreamRunQueue(bNc, { prefix, ackWaitMs: ACK_WAIT_MS }).consume(slow.handler, { maxConcurrent: 1 });
      await edge.submit(runRequest("slow-1"));
      await waitFor(() => (slow.got.length === 1 ? true : undefined), { timeoutMs: 10_000, what: "slow-1 at the slow runner" });
      // taken-1 was acknowledged when taken; slow-1 a third of the ack wait in, while its runner lives.
      await aNc.close();
      const otherNc = await connectTo(nats);
      const otherConsumer = new JetStreamRunQueue(otherNc, { prefix, ackWaitMs: ACK_WAIT_MS }).consume(other.handler, { maxConcurrent: 4 });
      await new Promise((resolve) => setTimeout(resolve, 3 * ACK_WAIT_MS));
      expect(other.taken).toEqual([]);
      expect(slow.got).toEqual(["slow-1"]);
      other.finishAll();
      await otherConsumer.stop();
      await otherNc.close();
    } finally {
      taker.finishAll();
      other.finishAll();
      slow.release();
      await Promise.all([takerConsumer.stop(), slowConsumer?.stop()]);
      await Promise.all([edgeNc.close(), bNc.close()]);
    }
  }, 30_000);
});
