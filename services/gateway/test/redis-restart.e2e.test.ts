import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_AGENTS, runModels } from "./fixtures/agent-runs.js";
import { expectNoLostAnswers, FaultLoad, mixedRequests, openFaultClients, summarize } from "./fixtures/fault-load.js";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

const RESTARTS = 3;

/**
 * Issue 15: while redis-server restarts, requests that need Redis (the run registry behind
 * `agent` and `agent.wait`, the failed-auth counter behind `connect`) get an error from the
 * catalogue that says to retry, never ioredis's own text ("Stream isn't writeable..."), and
 * once it is back everything answers again. Redis runs without persistence here, as a cache
 * would: what it held (finished runs' results) is gone after a restart.
 */
describe("redis-server restarted under load (distributed)", () => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway("distributed", { edges: 2, agents: RUN_AGENTS, models: runModels(fake) });
    await openFaultClients(gw, 4, clients);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
    await fake?.close();
  });

  it("answers with clear retryable errors while Redis is away, then recovers", { timeout: 120_000 }, async () => {
    const load: FaultLoad = new FaultLoad(clients, mixedRequests("redis", () => load));
    const connects: Array<{ ok: boolean; code?: string; message?: string }> = [];
    load.start();
    try {
      await new Promise((r) => setTimeout(r, 1_500));
      for (let i = 0; i < RESTARTS; i++) {
        await gw.redis!.kill(i % 2 === 0 ? "SIGKILL" : "SIGTERM");
        // New connections while Redis is away: the failed-auth limiter cannot count.
        const fresh = await WsClient.open(gw.wsUrl(i % 2));
        const res = await fresh.connect(`${TOKEN}-wrong`);
        connects.push({ ok: res.ok === true, code: res.error?.code, message: res.error?.message });
        fresh.close();
        await new Promise((r) => setTimeout(r, 1_000));
        await gw.redis!.start();
        await new Promise((r) => setTimeout(r, 2_000));
      }
    } finally {
      await load.stop();
    }
    expectNoLostAnswers(
      // agent.wait on a run whose record the restart took with it: NOT_FOUND is the truth.
      load.outcomes.filter((o) => !(o.method === "agent.wait" && o.code === "NOT_FOUND")),
      () => gw.logs(),
    );
    const failed = load.outcomes.filter((o) => !o.ok && o.code !== "NOT_FOUND");
    expect(failed.length, `Redis was away, yet nothing failed:\n${summarize(load.outcomes)}`).toBeGreaterThan(0);
    for (const c of connects) {
      expect(c.ok).toBe(false);
      // The failed-auth limiter cannot count the failure: the edge says so rather than guess.
      expect(c.code).toBe("UNAVAILABLE");
      expect(c.message ?? "").not.toMatch(/stream isn't writeable|enableOfflineQueue|connection is closed/i);
    }

    // Recovered: every client's runs and waits answer again, and new clients connect.
    for (const [i, client] of clients.entries()) {
      const res = await client.request("agent", { message: `after ${i}`, sessionKey: `fault:after-${i}`, runId: `redis-after-${i}` });
      expect(res.ok, JSON.stringify(res.error)).toBe(true);
      const wait = await client.request("agent.wait", { runId: `redis-after-${i}`, timeoutSeconds: 2 });
      expect(wait.payload, JSON.stringify(wait.error)).toMatchObject({ completed: true, status: "ok" });
    }
    const late = await WsClient.open(gw.wsUrl(1));
    expect((await late.connect(TOKEN)).ok).toBe(true);
    late.close();
  });
});
