import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectRun, RUN_AGENTS, runModels, send } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

/**
 * What an agent event costs the NATS server in deliveries, on 8 edges that each hold a control
 * connection (docs/scaling.md, Events). Two workloads of the same runs, as long as each other,
 * differ only in their number of output events: `slow` streams 40 chunks over 4 s, `pause4000`
 * 3 chunks over 4 s. Whatever else a run costs (dispatch, session RPCs, session events to every
 * control edge, lifecycle events to every control edge, the record to the starting edge, the
 * servers' own chatter over those seconds) is the same in both, so the difference in
 * deliveries divided by the difference in events is the cost of one more event.
 */
const EDGES = 8;
const RUNS = 6;

interface Counters {
  /** The server's every delivery to a client (`/varz` out_msgs). */
  all: number;
  /** Deliveries to the edges' connections (`/connz`, connections named `edge`). */
  edges: number;
}

async function counters(monitorUrl: string): Promise<Counters> {
  const varz = (await (await fetch(`${monitorUrl}/varz`)).json()) as { out_msgs: number };
  const connz = (await (await fetch(`${monitorUrl}/connz?limit=4096`)).json()) as { connections: Array<{ name?: string; out_msgs: number }> };
  const edges = connz.connections.filter((c) => c.name === "edge");
  expect(edges).toHaveLength(EDGES);
  return { all: varz.out_msgs, edges: edges.reduce((sum, c) => sum + c.out_msgs, 0) };
}

describe("agent event fan-out on 8 edges (distributed)", () => {
  let fake: FakeModelServer | undefined;
  let gw: GatewayUnderTest | undefined;
  const clients: WsClient[] = [];
  let round = 0;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway("distributed", { edges: EDGES, agents: RUN_AGENTS, models: runModels(fake), runner: { maxConcurrentRuns: 16 } });
    // A control connection on every edge: each edge hears every run's lifecycle.
    for (let i = 0; i < EDGES; i++) clients.push(await open(i, "control"));
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
    await fake?.close();
  });

  async function open(edge: number, role: string): Promise<WsClient> {
    const client = await WsClient.open(gw!.wsUrl(edge));
    clients.push(client);
    expect((await client.connect(TOKEN, role)).ok).toBe(true);
    return client;
  }

  /** RUNS runs of `message` started on edge 0; their event count and the counters' deltas. */
  async function workload(message: string): Promise<{ events: number; outputs: number; delta: Counters }> {
    round += 1;
    const starter = await open(0, "node");
    const before = await counters(gw!.nats!.monitorUrl);
    const runs = Array.from({ length: RUNS }, async (_, i) => {
      const runId = `fan-${round}-${i}`;
      const answer = send(starter, "agent", { message, sessionKey: `e2e:fan:${round}:${i}`, agentId: "oa", runId }, 30_000);
      const events = await collectRun(starter, runId, 30_000);
      expect((await answer).ok).toBe(true);
      return events;
    });
    const events = (await Promise.all(runs)).flat();
    // Let the last deliveries (the other edges' lifecycle end) land before reading the counters.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await counters(gw!.nats!.monitorUrl);
    return {
      events: events.length,
      outputs: events.filter((e) => e.stream !== "lifecycle").length,
      delta: { all: after.all - before.all, edges: after.edges - before.edges },
    };
  }

  it("delivers one more output event to the edges about once, and a firehose on one edge adds one per output event", async () => {
    const few = await workload("pause4000 few");
    const many = await workload("slow many");
    const extra = many.events - few.events;
    expect(extra).toBeGreaterThanOrEqual(RUNS * 30);
    const perEventEdges = (many.delta.edges - few.delta.edges) / extra;
    const perEventAll = (many.delta.all - few.delta.all) / extra;

    // A dashboard on edge 5 asks for every event.
    const dashboard = await open(5, "control");
    expect((await send(dashboard, "agent.subscribe", { all: true })).ok).toBe(true);
    const fire = await workload("slow firehose");
    const firehoseAdds = (fire.delta.edges - many.delta.edges) / fire.outputs;

    console.log(
      JSON.stringify({
        edges: EDGES,
        runs: RUNS,
        eventsPerRun: { few: few.events / RUNS, many: many.events / RUNS },
        deliveriesToEdges: { few: few.delta.edges, many: many.delta.edges, firehose: fire.delta.edges },
        deliveriesAll: { few: few.delta.all, many: many.delta.all, firehose: fire.delta.all },
        perEventToEdges: perEventEdges,
        perEventAll,
        perRunEventToEdgesMany: many.delta.edges / many.events,
        firehoseAddsPerOutputEvent: firehoseAdds,
      }),
    );
    expect(perEventEdges).toBeGreaterThan(0.9);
    expect(perEventEdges).toBeLessThan(1.15);
    expect(firehoseAdds).toBeGreaterThan(0.9);
    expect(firehoseAdds).toBeLessThan(1.15);
  }, 90_000);
});
