import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_AGENTS, runModels } from "./fixtures/agent-runs.js";
import { expectNoLostAnswers, FaultLoad, logsOfRuns, mixedRequests, openFaultClients, summarize } from "./fixtures/fault-load.js";
import { type GatewayUnderTest, startGateway } from "./fixtures/gateway.js";
import type { WsClient } from "./fixtures/ws-client.js";

const RESTARTS = 10;

/**
 * Issue 15: an `agent` request in flight across a nats-server restart must get its answer or a
 * clear retryable error, never silence. Two edges, two runners, WS `agent` runs and WS RPCs that
 * cross the bus (fixtures/fault-load.ts), while nats-server is killed and started again ten
 * times on the same store.
 */
describe("nats-server restarted under load (distributed)", () => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway("distributed", { edges: 2, runners: 2, agents: RUN_AGENTS, models: runModels(fake), ...(process.env.FAULT_DEBUG ? { extraConfig: { ops: { logLevel: "debug" } } } : {}) });
    await openFaultClients(gw, 6, clients);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
    await fake?.close();
  });

  it("answers every request in flight, with its result or a retryable error", { timeout: 180_000 }, async () => {
    const load: FaultLoad = new FaultLoad(clients, mixedRequests("nats", () => load));
    load.start();
    try {
      await new Promise((r) => setTimeout(r, 1_500));
      for (let i = 0; i < RESTARTS; i++) {
        await gw.nats!.kill(i % 2 === 0 ? "SIGKILL" : "SIGTERM");
        // Down for 0.2 to 2 s: clients reconnect at once or after several attempts.
        await new Promise((r) => setTimeout(r, 200 + (i % 4) * 600));
        await gw.nats!.start();
        await new Promise((r) => setTimeout(r, 1_500));
      }
      await new Promise((r) => setTimeout(r, 3_000));
    } finally {
      await load.stop();
    }
    expectNoLostAnswers(load.outcomes, (silent) => logsOfRuns(gw, silent));
    expect(load.answeredRuns().length, summarize(load.outcomes)).toBeGreaterThan(20);

    // Recovered: every client gets answers again (the first run after the last restart may wait
    // for a runner's consumer to be pulling again, hence a bound above one run's time).
    for (const [i, client] of clients.entries()) {
      const res = await client.request("agent", { message: `after ${i}`, sessionKey: `fault:after-${i}` }, 30_000);
      expect(res.ok, JSON.stringify(res.error)).toBe(true);
    }
  });
});
