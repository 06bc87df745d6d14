import { type GatewayUnderTest, type Mode, startBenchGateway, TOKEN } from "../lib/gateway.js";
import { median } from "../lib/stats.js";
import { type BurstResult, streamBurst } from "../lib/stream-burst.js";
import { withUpstreams } from "../lib/upstreams.js";
import { atMost, type BenchContext, type BenchResult, type Figure, info, type Suite } from "../lib/suite.js";
import { cpuMicros, treeRssBytes } from "../lib/system.js";

// 100 chunks 10 ms apart: a one-second answer, as an upstream model streams it.
const WORDS = 100;
const MODEL = `slow-${WORDS}-10`;
const WALL_MAX = 1.3;
const TTFC_P99_MAX = 2;
const PEAK_RSS_MAX = 1.2;
const WARMUP_STREAMS = 64;

interface Side {
  name: "direct" | "passthrough" | "gateway";
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Processes whose memory the side costs (the gateway's, or the passthrough's). */
  pids: () => number[];
}

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

type Burst = BurstResult & { peakRssMiB: number; cpuUsPerChunk: number };

/**
 * Runs one burst while sampling the side's processes' summed RSS; returns the peak with it, and
 * the CPU those processes spent per chunk delivered (a figure the machine's other load moves far
 * less than wall time).
 */
async function burstWithPeak(side: Side, count: number): Promise<Burst> {
  let peak = 0;
  const sample = () => {
    peak = Math.max(peak, side.pids().reduce((sum, pid) => sum + treeRssBytes(pid), 0));
  };
  const cpu = () => side.pids().reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const timer = setInterval(sample, 100);
  try {
    const before = cpu();
    const result = await streamBurst({ url: side.url, body: side.body, headers: side.headers, count, expectedWords: WORDS, timeoutMs: 120_000 });
    sample();
    const chunks = Math.max(1, result.complete * WORDS);
    return { ...result, peakRssMiB: mib(peak), cpuUsPerChunk: Math.round(((cpu() - before) / chunks) * 10) / 10 };
  } finally {
    clearInterval(timer);
  }
}

function summarize(rounds: Burst[]) {
  return {
    complete: Math.min(...rounds.map((r) => r.complete)),
    wallMs: median(rounds.map((r) => r.wallMs)),
    ttfcP99Ms: median(rounds.map((r) => r.ttfcP99Ms)),
    peakRssMiB: Math.max(...rounds.map((r) => r.peakRssMiB)),
    cpuUsPerChunk: median(rounds.map((r) => r.cpuUsPerChunk)),
    rounds: rounds.map(({ wallMs, ttfcP50Ms, ttfcP99Ms, complete, peakRssMiB, cpuUsPerChunk, failures }) => ({
      wallMs,
      ttfcP50Ms,
      ttfcP99Ms,
      complete,
      peakRssMiB,
      cpuUsPerChunk,
      failures,
    })),
  };
}

async function measure(ctx: BenchContext, mode: Mode, gw: GatewayUnderTest, sides: Side[], count: number): Promise<BenchResult> {
  const runs = new Map<Side["name"], Burst[]>(sides.map((s) => [s.name, []]));
  // Unmeasured first: a fresh process's first burst pays for connections, JIT and first sessions.
  for (const side of sides) await burstWithPeak(side, Math.min(count, WARMUP_STREAMS));
  for (let r = 0; r < ctx.args.rounds; r++) {
    for (const side of sides) runs.get(side.name)!.push(await burstWithPeak(side, count));
  }
  const [direct, floor, through] = sides.map((s) => summarize(runs.get(s.name)!));
  ctx.log(
    `  ${count} streams ${mode}: gateway ${through!.complete}/${count} whole, wall ${through!.wallMs} ms, ttfc p99 ${through!.ttfcP99Ms} ms, peak ${through!.peakRssMiB} MiB, ` +
      `${through!.cpuUsPerChunk} µs CPU per chunk; direct ${direct!.wallMs} ms / ${direct!.ttfcP99Ms} ms; passthrough ${floor!.wallMs} ms / ` +
      `${floor!.ttfcP99Ms} ms, peak ${floor!.peakRssMiB} MiB, ${floor!.cpuUsPerChunk} µs CPU per chunk`,
  );
  for (const [name, rounds] of runs) {
    const failed = rounds.flatMap((r) => Object.entries(r.failures));
    if (failed.length > 0) ctx.log(`    ${name} failures: ${failed.slice(0, 5).map(([why, n]) => `${n} x ${why}`).join("; ")}`);
  }
  const figures: Figure[] = [
    { ...info("streams complete with every chunk", "streams", through!.complete, count), target: `= ${count}`, pass: through!.complete === count },
    atMost("wall time vs direct", "ms", through!.wallMs, direct!.wallMs, WALL_MAX),
    atMost("time to first chunk p99 vs direct", "ms", through!.ttfcP99Ms, direct!.ttfcP99Ms, TTFC_P99_MAX),
    info("wall time vs passthrough", "ms", through!.wallMs, floor!.wallMs),
    atMost("peak RSS vs passthrough", "MiB", through!.peakRssMiB, floor!.peakRssMiB, PEAK_RSS_MAX),
    info("CPU per chunk delivered vs passthrough (every gateway process)", "µs", through!.cpuUsPerChunk, floor!.cpuUsPerChunk),
  ];
  return { bench: `${count} concurrent streams ${mode}`, status: "ok", figures, details: { direct, passthrough: floor, gateway: through, processes: gw.ops.map((o) => o.name) } };
}

/**
 * Many simultaneous streaming chat completions of a one-second answer (100 chunks at 10 ms):
 * through the gateway, against the same burst sent to the fake upstream directly and through the
 * passthrough floor, in the same rounds. Every stream must deliver every chunk.
 */
async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const counts = ctx.args.quick ? [64] : [1_024, 2_048];
  const results: BenchResult[] = [];
  await withUpstreams(async ({ upstream, floor: floorUrl, floorProcess }) => {
    const directBody = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hello" }], stream: true });
    for (const mode of ["embedded", "distributed"] as const) {
      const gw = await startBenchGateway(mode, {
        upstreamUrl: upstream,
        metrics: true,
        agents: [{ id: "stream100", name: "Stream", model: `fake/${MODEL}`, description: "one-second 100-chunk stream" }],
        extraConfig: { runner: { maxConcurrentRuns: Math.max(...counts) } },
      });
      const sides: Side[] = [
        { name: "direct", url: `${upstream}/v1/chat/completions`, body: directBody, headers: {}, pids: () => [] },
        { name: "passthrough", url: `${floorUrl}/v1/chat/completions`, body: directBody, headers: {}, pids: () => [floorProcess.child.pid!] },
        {
          name: "gateway",
          url: `${gw.httpUrl()}/v1/chat/completions`,
          body: JSON.stringify({ model: "stream100", messages: [{ role: "user", content: "hello" }], stream: true }),
          headers: { authorization: `Bearer ${TOKEN}` },
          pids: () => gw.ops.map((o) => o.proc.child.pid!),
        },
      ];
      try {
        for (const count of counts) {
          try {
            results.push(await measure(ctx, mode, gw, sides, count));
          } catch (err) {
            results.push({ bench: `${count} concurrent streams ${mode}`, status: "failed", reason: (err as Error).message.split("\n")[0]! });
          }
        }
      } finally {
        await gw.stop();
      }
    }
  });
  return results;
}

export const streamsSuite: Suite = { name: "streams", run };
