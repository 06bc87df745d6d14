/**
 * 256 concurrent streaming runs across 2 runner processes and 2 edges (distributed mode, real
 * nats-server + redis-server on free ports, fake OpenAI upstream on 127.0.0.1). Checks that every
 * run completes with every event delivered in order, and reads each edge's own event-loop delay
 * p99 over the runs (`nodejs_eventloop_lag_p99_seconds`, 10 ms resolution); the p99 of `GET /health`
 * round trips sent every 10 ms is reported beside it, as a client would feel it.
 *
 *   npx tsx bench/agent-runs.ts [--runs 256]
 */
import { startFakeModelServer } from "@gw/testing";
import { RUN_AGENTS, runModels } from "../services/gateway/test/fixtures/agent-runs.js";
import { startGateway, TOKEN } from "../services/gateway/test/fixtures/gateway.js";
import { eventLoopP99 } from "./lib/metrics.js";
import { type Frame, WsClient } from "../services/gateway/test/fixtures/ws-client.js";

const RUNS = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 256;
const EXPECTED = Array.from({ length: 40 }, (_, i) => `w${i} `).join("");

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function probeHealth(url: string, stop: { done: boolean }): Promise<number[]> {
  const samples: number[] = [];
  while (!stop.done) {
    const t0 = performance.now();
    await fetch(`${url}/health`).then((r) => r.arrayBuffer());
    samples.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 10));
  }
  return samples;
}

/** One run: events must be start, 40 chunks in order, end; the payload must equal the chunks. */
async function oneRun(client: WsClient, i: number): Promise<string | undefined> {
  const runId = `bench-${i}`;
  client.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: i, method: "agent", params: { message: "slow bench", sessionKey: `bench:${i}`, agentId: "oa", runId } }));
  const res = await client.next((f) => f.id === i, 120_000);
  const events = [];
  for (;;) {
    const f: Frame = await client.next((x) => x.event === "agent", 1_000).catch(() => ({}) as Frame);
    if (f.event === undefined) break;
    events.push(f.payload as { stream: string; data: { phase?: string; text?: string } });
  }
  const text = events.filter((e) => e.stream === "assistant").map((e) => e.data.text).join("");
  const phases = events.filter((e) => e.stream === "lifecycle").map((e) => e.data.phase);
  if (!res.ok) return `run ${i}: ${res.error?.code} ${res.error?.message}`;
  if (text !== EXPECTED || phases.join() !== "start,end" || events[0]?.data.phase !== "start") return `run ${i}: events out of order or missing`;
  return undefined;
}

const fake = await startFakeModelServer();
const gw = await startGateway("distributed", { edges: 2, runners: 2, agents: RUN_AGENTS, models: runModels(fake), runner: { maxConcurrentRuns: 160 }, health: true });
try {
  const clients = await Promise.all(
    Array.from({ length: RUNS }, async (_, i) => {
      const c = await WsClient.open(gw.wsUrl(i % 2));
      await c.connect(TOKEN, "node");
      return c;
    }),
  );
  // The first scrape resets the edges' event-loop histograms: the second covers only the runs.
  await Promise.all(gw.edges.map((e) => eventLoopP99(e.metricsPort)));
  const stop = { done: false };
  const probes = [probeHealth(gw.httpUrl(0), stop), probeHealth(gw.httpUrl(1), stop)];
  const t0 = performance.now();
  const failures = (await Promise.all(clients.map((c, i) => oneRun(c, i + 1)))).filter(Boolean);
  const seconds = (performance.now() - t0) / 1000;
  stop.done = true;
  const [edge0, edge1] = await Promise.all(probes);
  const loopP99 = await Promise.all(gw.edges.map((e) => eventLoopP99(e.metricsPort)));
  for (const c of clients) c.close();
  const report = {
    runs: RUNS,
    failed: failures.length,
    firstFailures: failures.slice(0, 3),
    wallSeconds: Number(seconds.toFixed(2)),
    idealSeconds: 4,
    edgeEventLoopDelayP99Ms: loopP99.map((v) => Number(v.toFixed(1))),
    healthRoundTripP99Ms: [percentile(edge0!, 99), percentile(edge1!, 99)].map((v) => Number(v.toFixed(1))),
    healthRoundTripP50Ms: [percentile(edge0!, 50), percentile(edge1!, 50)].map((v) => Number(v.toFixed(1))),
  };
  console.log(JSON.stringify(report, null, 2));
  process.exitCode = failures.length === 0 && Math.max(...report.edgeEventLoopDelayP99Ms) < 50 ? 0 : 1;
} finally {
  await gw.stop();
  await fake.close();
}
