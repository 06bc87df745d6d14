import { type FakeModelServer, startFakeModelServer, waitUntil } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_AGENTS, runModels, send, waitRunEvent } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

/** The documented bound (docs/decisions.md): heartbeat TTL 6 s + one 1 s poll, plus slack for a loaded CI box. */
const DEATH_BOUND_MS = 15_000;

describe("a runner killed mid-run (distributed)", () => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  let client: WsClient | undefined;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway("distributed", { edges: 2, agents: RUN_AGENTS, models: runModels(fake) });
  });
  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await fake?.close();
  });

  it("ends the run with lifecycle error and an error response, and agent.wait elsewhere sees it", async () => {
    client = await WsClient.open(gw.wsUrl(0));
    await client.connect(TOKEN, "node");
    const runId = "death-1";
    const response = send(client, "agent", { message: "slow die", sessionKey: "e2e:death", agentId: "oa", runId }, DEATH_BOUND_MS + 5_000);
    await waitRunEvent(client, runId, (e) => e.stream === "assistant");
    await gw.runner!.proc.kill("SIGKILL");
    const last = await waitRunEvent(client, runId, (e) => e.stream === "lifecycle", DEATH_BOUND_MS).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${gw.logs()}`);
    });
    expect(last.data).toMatchObject({ phase: "error", code: "UNAVAILABLE" });
    expect(await response).toMatchObject({ ok: false, error: { code: "UNAVAILABLE" } });
    const other = await WsClient.open(gw.wsUrl(1));
    await other.connect(TOKEN, "node");
    expect(await send(other, "agent.wait", { runId })).toMatchObject({ ok: true, payload: { completed: true, status: "error" } });
    other.close();
  });
});

/**
 * Several runs under load, two runners with two slots each: four runs running (two on each
 * runner) and two queued when one runner is killed -9. The dead runner's runs end with a
 * lifecycle `error` and UNAVAILABLE, the others finish, and the queued runs are served by the
 * runner that remains.
 */
describe("a runner killed -9 with several runs in hand (distributed)", () => {
  const RUNS = 6;
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway("distributed", {
      edges: 2,
      runners: 2,
      agents: RUN_AGENTS,
      models: runModels(fake),
      runner: { maxConcurrentRuns: 2 },
    });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
    await fake?.close();
  });

  it("ends the dead runner's runs with an error, finishes the rest, and serves the queue", { timeout: 90_000 }, async () => {
    for (let i = 0; i < RUNS; i++) {
      const client = await WsClient.open(gw.wsUrl(i % 2));
      clients.push(client);
      await client.connect(TOKEN, "node");
    }
    const runIds = clients.map((_, i) => `death-load-${i}`);
    const responses = clients.map((client, i) =>
      send(client, "agent", { message: "slow load", sessionKey: `e2e:death-load-${i}`, agentId: "oa", runId: runIds[i] }, 60_000),
    );
    // Four runs stream (two per runner); two wait in the queue.
    const streaming = new Set<number>();
    clients.forEach((client, i) => {
      void waitRunEvent(client, runIds[i]!, (e) => e.stream === "assistant", 30_000).then(
        () => streaming.add(i),
        () => undefined,
      );
    });
    await waitUntil(() => streaming.size >= 4, { timeoutMs: 30_000 });
    expect(streaming.size, gw.logs()).toBe(4);
    await gw.runners![0]!.kill("SIGKILL");

    const answers = await Promise.all(responses);
    const failed = answers.filter((a) => a.ok !== true);
    expect(failed.map((a) => a.error?.code), JSON.stringify(answers)).toEqual(["UNAVAILABLE", "UNAVAILABLE"]);
    expect(answers.filter((a) => a.ok === true)).toHaveLength(RUNS - 2);
    // Every run's socket heard its end, and any edge answers agent.wait with the outcome.
    for (const [i, client] of clients.entries()) {
      const answer = answers[i]!;
      const last = await waitRunEvent(client, runIds[i]!, (e) => e.stream === "lifecycle" && e.data.phase !== "start", DEATH_BOUND_MS);
      expect(last.data.phase).toBe(answer.ok === true ? "end" : "error");
      const wait = await send(clients[(i + 1) % RUNS]!, "agent.wait", { runId: runIds[i] });
      expect(wait.payload).toMatchObject({ completed: true, status: answer.ok === true ? "ok" : "error" });
    }
  });
});
