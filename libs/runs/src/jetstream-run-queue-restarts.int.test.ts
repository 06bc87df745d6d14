import { type NatsServerHandle, startNats, waitFor } from "@gw/testing";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JetStreamRunQueue } from "./jetstream-run-queue.js";
import { runRequest, ScriptedRunner } from "./run-queue.contract.js";

let nats: NatsServerHandle;
beforeAll(async () => {
  nats = await startNats();
});
afterAll(async () => {
  await nats?.stop();
});

const connectTo = (server: NatsServerHandle) =>
  connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });

/**
 * Issue 15: over ten nats-server restarts a few seconds apart, runners stopped taking runs until
 * the restarts were over. After a failed pull the runner looked its consumer up again, a
 * JetStream API request that, sent while the server was down, was lost and cost its 5 s
 * timeout; with the server back for less than that, the next restart began first. Each run
 * here is submitted right after a restart and must be taken within 3 s, less than that timeout
 * and far less than the runner's 60 s pull would take to expire by itself.
 */
describe("JetStreamRunQueue across repeated NATS restarts", () => {
  const conns: NatsConnection[] = [];
  afterAll(async () => {
    await Promise.all(conns.map((nc) => nc.close()));
  });

  it("pulls again after every reconnect, so a run submitted then is taken at once", async () => {
    const [edgeNc, runnerNc] = await Promise.all([connectTo(nats), connectTo(nats)]);
    conns.push(edgeNc, runnerNc);
    const prefix = `restarts${Math.random().toString(36).slice(2, 6)}`;
    const edge = new JetStreamRunQueue(edgeNc, { prefix });
    const runner = new ScriptedRunner();
    const consumer = new JetStreamRunQueue(runnerNc, { prefix, pullExpiresMs: 60_000 }).consume(runner.handler, {
      maxConcurrent: 4,
    });
    try {
      await edge.submit(runRequest("before"));
      await waitFor(() => (runner.taken.includes("before") ? true : undefined), { timeoutMs: 10_000, what: "the first run" });
      runner.finish("before");
      for (let i = 0; i < 6; i++) {
        // SIGTERM: the server ends the pull in flight with an error the runner sees.
        await nats.kill("SIGTERM");
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await nats.start();
        const runId = `after-${i}`;
        await waitFor(() => edge.submit(runRequest(runId)).then(() => true), { timeoutMs: 10_000, intervalMs: 100, what: `submit ${runId}` });
        await waitFor(() => (runner.taken.includes(runId) ? true : undefined), { timeoutMs: 3_000, what: `${runId} taken` });
        runner.finish(runId);
      }
      expect(runner.taken.filter((id) => id.startsWith("after-"))).toHaveLength(6);
    } finally {
      runner.finishAll();
      await consumer.stop();
    }
  }, 120_000);
});
