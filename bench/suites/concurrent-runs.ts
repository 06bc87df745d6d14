import { type GatewayUnderTest, gatewayMethods, type Mode, startBenchGateway } from "../lib/gateway.js";
import { sleep, spawnBench } from "../lib/procs.js";
import { RunDriver } from "../lib/run-driver.js";
import { eventLoopP99 } from "../lib/metrics.js";
import { Samples } from "../lib/stats.js";
import { atLeast, type BenchContext, type BenchResult, notAvailable, type Suite } from "../lib/suite.js";

const TARGET_RUNS = 256;
const DELAY_LIMIT_MS = 50;
// Runs per driver socket, under the default maxInFlightPerConnection (64).
const RUNS_PER_SOCKET = 32;
const LEVELS = [16, 64, 128, 256, 512];
/**
 * Every run of a level must be live at once: a runner takes at most `runner.maxConcurrentRuns`
 * (default 256) and queues the rest, which would measure fewer live runs than the level names.
 */
const RUNNER = { maxConcurrentRuns: Math.max(...LEVELS) };
/** A level whose runs took longer than this (one-second runs) had runs waiting: not all were live. */
const LIVE_WALL_LIMIT_MS = 1_900;

/**
 * The edge's responsiveness while `n` one-second streaming runs are live: its own event-loop
 * delay p99 over the level (the monitor of libs/runtime, scraped before and after), and the p99
 * of GET /health round trips sent every 10 ms, event-loop delay as a client sees it.
 */
async function probeLevel(
  gw: GatewayUnderTest,
  n: number,
): Promise<{ loopP99Ms: number; p99Ms: number; ok: number; failed: number; wallMs: number }> {
  const metricsPort = gw.edges[0]!.metricsPort;
  await eventLoopP99(metricsPort); // resets the histogram: the next scrape covers only this level
  const drivers = await Promise.all(
    Array.from({ length: Math.ceil(n / RUNS_PER_SOCKET) }, () => RunDriver.open(gw.wsUrl())),
  );
  const samples = new Samples();
  let probing = true;
  const probe = async () => {
    while (probing) {
      const at = performance.now();
      await fetch(`${gw.httpUrl()}/health`).then((r) => r.arrayBuffer(), () => undefined);
      samples.add(performance.now() - at);
      await sleep(10);
    }
  };
  const prober = probe();
  let ok = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const driver = drivers[i % drivers.length]!;
      const done = await driver.run({ message: "go", sessionKey: `bench:live:${n}:${i}`, agentId: "slow" });
      if (done) ok++;
      else failed++;
    }),
  );
  const wallMs = Math.round(performance.now() - started);
  probing = false;
  await prober;
  const loopP99Ms = Math.round((await eventLoopP99(metricsPort)) * 10) / 10;
  for (const d of drivers) d.close();
  return { loopP99Ms, p99Ms: samples.summary().p99, ok, failed, wallMs };
}

async function measureMode(ctx: BenchContext, mode: Mode, upstreamUrl: string): Promise<BenchResult> {
  const bench = `concurrent streaming runs (${mode})`;
  const gw = await startBenchGateway(mode, { upstreamUrl, metrics: true, extraConfig: { runner: RUNNER } });
  try {
    if (!(await gatewayMethods(gw)).has("agent")) return notAvailable(bench, "the gateway has no agent method yet");
    // Warm-up (JIT, first session files, connection pools), not counted.
    await probeLevel(gw, 8);
    const levels = ctx.args.quick ? [8, 32] : LEVELS;
    const steps: Array<{ runs: number; loopP99Ms: number; p99Ms: number; ok: number; failed: number; wallMs: number }> = [];
    let best = 0;
    for (const n of levels) {
      const step = { runs: n, ...(await probeLevel(gw, n)) };
      steps.push(step);
      ctx.log(
        `  ${mode}: ${n} live runs -> edge event-loop p99 ${step.loopP99Ms} ms, /health p99 ${step.p99Ms} ms, ` +
          `${step.ok} ok, ${step.failed} failed, all done in ${step.wallMs} ms`,
      );
      if (!(step.loopP99Ms < DELAY_LIMIT_MS) || step.failed > 0 || step.wallMs > LIVE_WALL_LIMIT_MS) break;
      best = n;
    }
    const target = ctx.args.quick ? levels.at(-1)! : TARGET_RUNS;
    return {
      bench,
      status: "ok",
      figures: [atLeast(`live runs with edge delay p99 < ${DELAY_LIMIT_MS} ms vs ${target}`, "runs", best, target, 1)],
      details: { steps, runner: RUNNER, run: "agent 'slow': 50 chunks 20 ms apart from the fake upstream" },
    };
  } finally {
    await gw.stop();
  }
}

async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const fake = spawnBench("servers/fake-openai.ts");
  try {
    const upstreamUrl = `http://127.0.0.1:${(await fake.waitLine(/listening (\d+)/))[1]}`;
    return [await measureMode(ctx, "embedded", upstreamUrl), await measureMode(ctx, "distributed", upstreamUrl)];
  } finally {
    await fake.stop();
  }
}

export const concurrentRunsSuite: Suite = { name: "concurrent-runs", run };
