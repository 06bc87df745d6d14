import { randomUUID } from "node:crypto";
import { connectNats } from "@gw/bus";
import { runQueueNames } from "@gw/runs";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { expectIntactSession } from "./fixtures/session-load.js";
import { WsClient } from "./fixtures/ws-client.js";

/** Bound on one answer: a request still unanswered after this counts as lost. */
const ANSWER_BOUND_MS = 30_000;

describe("distributed on a 3-node NATS cluster (R3) and a 3-master Redis Cluster", () => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    gw = await startGateway("distributed", { edges: 2, runners: 2, clusters: true });
    for (let edge = 0; edge < 2; edge++) {
      for (let i = 0; i < 2; i++) {
        const client = await WsClient.open(gw.wsUrl(edge));
        expect((await client.connect(TOKEN)).ok).toBe(true);
        clients.push(client);
      }
    }
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("answers every run and keeps every acknowledged run's messages while the run queue's leader is killed", async () => {
    const nc = await connectNats({ url: gw.natsCluster!.urls.join(",") });
    const stream = await (await jetstreamManager(nc)).streams.info(runQueueNames("gw").stream);
    await nc.close();
    expect(stream.config.num_replicas).toBe(3);
    const leader = gw.natsCluster!.nodes.find((n) => n.name === stream.cluster?.leader)!;
    expect(leader, "the run queue has a leader").toBeDefined();

    const tag = randomUUID().slice(0, 6);
    const done: Array<{ client: WsClient; key: string; body: string }> = [];
    const failed: string[] = [];
    let answered = 0;
    // Four clients on two edges, 20 runs each, one at a time per client, each on its own session.
    const worker = async (client: WsClient, w: number) => {
      for (let i = 0; i < 20; i++) {
        const key = `ha:${tag}:${w}:${i}`;
        const body = `run ${w}-${i}`;
        // send() rejects when no answer comes within the bound: that would fail the test.
        const res = await send(client, "agent", { message: body, sessionKey: key, agentId: "main" }, ANSWER_BOUND_MS);
        answered++;
        if (res.ok) done.push({ client, key, body });
        else failed.push(`${res.error?.code}`);
      }
    };
    const killer = (async () => {
      while (done.length < 15) await new Promise((resolve) => setTimeout(resolve, 50));
      await leader.kill();
    })();
    await Promise.all([...clients.map(worker), killer]);

    expect(answered).toBe(80);
    // A refusal names why (the queue unreachable while a leader is elected), never a hang.
    for (const code of failed) expect(["UNAVAILABLE", "TIMEOUT"]).toContain(code);
    expect(done.length).toBeGreaterThan(40);
    // Every acknowledged run's question and answer are in its session, in one chain.
    for (const { client, key, body } of done) {
      const messages = await expectIntactSession(client, key, [body]);
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    }
    // The killed node is not started again here: this test is about the time it is gone, and
    // waiting for its every consumer to be current again took over 30 s once under CI's load.
  }, 180_000);
});
