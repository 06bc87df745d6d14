import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectNats } from "@gw/bus";
import type { NewSession } from "@gw/sessions";
import { type GatewayUnderTest, type Mode, startBenchGateway } from "../lib/gateway.js";
import { sleep, spawnBench } from "../lib/procs.js";
import { RunDriver } from "../lib/run-driver.js";
import { type RunLoadSummary, startRunLoad } from "../lib/run-load.js";
import { edgeUrl, idleRssMiB, restartDistributed, type Started, startFigures } from "../lib/service-start.js";
import { benchSession, growSession, indexFeedsDrained, manySessions, openFileStore, openNatsStore } from "../lib/session-store.js";
import { type Latencies, newSamples, type RpcRequest, sampleAlternating, sessionTotals, summarize } from "../lib/rpc-latency.js";
import type { Samples } from "../lib/stats.js";
import { atMost, type BenchContext, type BenchResult, type Figure, type Suite } from "../lib/suite.js";

/**
 * Issue 28's "flat as it grows": `sessions.list` (first page, with and without the agent filter)
 * and `sessions.preview` p99 over WebSocket with 100,000 stored sessions, against the same gateway
 * with an empty store (the baseline, same run), in both modes, idle and with 256 one-second
 * streaming runs kept going on each gateway; every service's start-up time and idle RSS, full
 * store vs empty; and the JetStream requests one agent run makes for its session with 10 and with
 * 400 prior messages. Sessions are written through the repository in bulk (`createMany`), not
 * 100,000 WebSocket calls.
 */

/** p99 bounds from issue 17. */
const P99_LIMIT_MS: Record<Mode, number> = { embedded: 10, distributed: 20 };
const PREVIEW_KEY = "bench:preview";
/** Issue 28: the latencies hold "with 256 streaming runs going". */
const LOAD_RUNS = 256;
/** Every load run live at once: the runner would queue those past its ceiling. */
const RUNNER = { maxConcurrentRuns: LOAD_RUNS };
/** Long enough for every load slot to be past its first (simultaneous) run. */
const LOAD_WARMUP_MS = 3_000;
/** "Idle" RSS after a few seconds of quiet (the memory suite's 100 s are too long to pay twice a mode here). */
const IDLE_SETTLE_MS = 3_000;
/**
 * The embedded store keeps a metadata file per session and a log per session with history. On
 * this shared machine 200,000 file creations took 2-4 minutes under the other engineers' load,
 * so the embedded sessions are metadata only (what `sessions.list` reads); the distributed ones
 * hold one message each. The previewed session has 40 messages in both.
 */
const EMBEDDED_MESSAGES = 0;

/** Requests of each kind per side, idle and under load. */
type Rounds = { idle: number; loaded: number };

const REQUESTS: RpcRequest[] = [
  { what: "sessions.list first page", method: "sessions.list", params: {} },
  { what: "sessions.list agentId filter", method: "sessions.list", params: { agentId: "ops" } },
  { what: "sessions.preview", method: "sessions.preview", params: { key: PREVIEW_KEY } },
];

function figures(mode: Mode, load: string, stored: number, [empty, full]: Latencies[]): Figure[] {
  return REQUESTS.flatMap(({ what }) => [
    atMost(`${mode}: ${what} p99 ${load}, ${stored} sessions vs empty store`, "ms", full![what]!.p99, empty![what]!.p99, 2),
    atMost(`${mode}: ${what} p99 ${load} at ${stored} sessions vs the ${P99_LIMIT_MS[mode]} ms bound`, "ms", full![what]!.p99, P99_LIMIT_MS[mode], 1),
  ]);
}

function summarizeSides(ctx: BenchContext, samples: Samples[][]): Latencies[] {
  const [empty, full] = samples.map((side) => summarize(REQUESTS, side)) as [Latencies, Latencies];
  for (const { what } of REQUESTS) {
    ctx.log(`      ${what}: empty store p50 ${empty[what]!.p50} ms, p99 ${empty[what]!.p99} ms; full store p50 ${full[what]!.p50} ms, p99 ${full[what]!.p99} ms`);
  }
  return [empty, full];
}

/**
 * `LOAD_RUNS` streaming runs kept going on one gateway at a time (agent "slow" on the fake
 * upstream, a new run as soon as one ends), the requests measured on that gateway meanwhile.
 * One loaded gateway at a time: the target is 256 runs on one deployment, and two loaded at once
 * on this 2-core machine measured each with half its CPU (sessions.list p50 73 ms at 2 x 256
 * runs). The phases go empty, full, full, empty, so each side is loaded as much early as late.
 */
async function loadedPhases(ctx: BenchContext, urls: string[], rounds: number) {
  const samples = newSamples(2, REQUESTS);
  const load: RunLoadSummary[][] = [[], []];
  for (const side of [0, 1, 1, 0]) {
    const running = await startRunLoad({ url: urls[side]!, runs: LOAD_RUNS, agentId: "slow", keyPrefix: "bench:load:" });
    try {
      await sleep(LOAD_WARMUP_MS);
      await sampleAlternating([urls[side]!], REQUESTS, Math.ceil(rounds / 2), [samples[side]!]);
    } finally {
      load[side]!.push(await running.stop());
    }
  }
  for (const [side, phases] of load.entries()) {
    for (const l of phases) {
      ctx.log(`      load on the ${side === 0 ? "empty" : "full"} store: ${l.ok} runs ok, ${l.failed} failed in ${l.wallMs} ms; run p50 ${l.runMs.p50} ms, p99 ${l.runMs.p99} ms`);
    }
  }
  return { samples, load };
}

/** The requests measured idle (alternating between the gateways request by request), then under load. */
async function idleAndLoaded(ctx: BenchContext, mode: Mode, stored: number, urls: string[], rounds: Rounds) {
  const idleSamples = newSamples(2, REQUESTS);
  await sampleAlternating(urls, REQUESTS, rounds.idle, idleSamples);
  ctx.log(`    idle (sessions.list total ${(await sessionTotals(urls)).join(" vs ")}):`);
  const idle = summarizeSides(ctx, idleSamples);
  ctx.log(`    under ${LOAD_RUNS} streaming runs, one gateway at a time:`);
  const { samples, load } = await loadedPhases(ctx, urls, rounds.loaded);
  const loaded = summarizeSides(ctx, samples);
  return {
    figures: [...figures(mode, "idle", stored, idle), ...figures(mode, `under ${LOAD_RUNS} runs`, stored, loaded)],
    details: { idle, loaded, load: { empty: load[0], full: load[1] } },
  };
}

const preview = (): NewSession => benchSession(PREVIEW_KEY, "main", 40, Date.now());

async function embedded(ctx: BenchContext, stored: number, rounds: Rounds, upstreamUrl: string): Promise<BenchResult> {
  const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), "gw-bench-sessions-scale-")));
  const gateways: GatewayUnderTest[] = [];
  const crashed: GatewayUnderTest[] = [];
  try {
    const written = performance.now();
    for (const [i, dir] of dirs.entries()) {
      const repo = await openFileStore(dir);
      await repo.createMany(i === 0 ? [preview()] : [preview(), ...manySessions(stored, "bench:s", EMBEDDED_MESSAGES)]);
      await repo.close();
    }
    const populateMs = Math.round(performance.now() - written);
    const start = async (dataDir: string) => {
      const at = performance.now();
      const gw = await startBenchGateway("embedded", { gateway: { dataDir }, startupTimeoutMs: 300_000, upstreamUrl, extraConfig: { runner: RUNNER } });
      return { gw, ms: Math.round(performance.now() - at) };
    };
    const rssOf = (gws: GatewayUnderTest[]) => idleRssMiB(gws.map((gw) => gw.edges[0]!.proc.child.pid!), IDLE_SETTLE_MS);
    // Each gateway is started, killed (SIGKILL: a crash, after which the store reads every file),
    // started again, stopped (SIGTERM: an operator's restart, after which it reads the snapshot
    // its clean close wrote) and started again: the gateway measured from then on. Spawn to
    // healthy, one gateway after the other.
    const afterCrashMs: number[] = [];
    for (const dataDir of dirs) {
      const first = await start(dataDir);
      await first.gw.edges[0]!.proc.kill("SIGKILL");
      await first.gw.stop();
      const again = await start(dataDir);
      crashed.push(again.gw);
      afterCrashMs.push(again.ms);
    }
    const afterCrashRssMiB = await rssOf(crashed);
    for (const gw of crashed.splice(0)) await gw.stop();
    const startupMs: number[] = [];
    for (const dataDir of dirs) {
      const { gw, ms } = await start(dataDir);
      gateways.push(gw);
      startupMs.push(ms);
    }
    const rssMiB = await rssOf(gateways);
    ctx.log(`  embedded, empty store vs ${stored} sessions (written in ${populateMs} ms):`);
    ctx.log(`    gateway start-up after a crash ${afterCrashMs[0]} vs ${afterCrashMs[1]} ms, idle RSS ${afterCrashRssMiB[0]} vs ${afterCrashRssMiB[1]} MiB`);
    ctx.log(`    gateway start-up after a clean stop ${startupMs[0]} vs ${startupMs[1]} ms, idle RSS ${rssMiB[0]} vs ${rssMiB[1]} MiB`);
    const started = startFigures("embedded: gateway", stored, { empty: startupMs[0]!, full: startupMs[1]! }, { empty: rssMiB[0]!, full: rssMiB[1]! });
    const measured = await idleAndLoaded(ctx, "embedded", stored, gateways.map((gw) => gw.wsUrl()), rounds);
    return {
      bench: "sessions-scale embedded",
      status: "ok",
      figures: [...measured.figures, ...started],
      details: { stored, rounds, populateMs, startupMs, rssMiB, afterCrash: { startupMs: afterCrashMs, rssMiB: afterCrashRssMiB }, ...measured.details },
    };
  } finally {
    for (const gw of crashed) await gw.stop();
    for (const gw of gateways) await gw.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** JetStream API requests (direct gets included) on the session streams and buckets during one run. */
async function requestsPerRun(gw: GatewayUnderTest, sessionKey: string): Promise<string[]> {
  const monitor = await connectNats({ url: gw.nats!.url });
  const driver = await RunDriver.open(gw.wsUrl());
  const seen: string[] = [];
  try {
    const sessionStore = (s: string) => (s.includes("_session_entries_p") || s.includes("_sessions_p")) && !s.includes("sessions_index");
    monitor.subscribe("$JS.API.>", {
      callback: (_err, msg) => {
        if (sessionStore(msg.subject)) seen.push(msg.subject);
      },
    });
    await monitor.flush();
    if (!(await driver.run({ message: "hello", sessionKey, agentId: "main" }))) throw new Error(`the run on ${sessionKey} failed`);
    await monitor.flush();
  } finally {
    driver.close();
    await monitor.close();
  }
  return seen;
}

/** Restarts every service of both gateways against their stores; their start-up and idle RSS figures. */
async function restarted(ctx: BenchContext, gateways: GatewayUnderTest[], stored: number, started: Started[][]) {
  await restartDistributed(gateways, started);
  const [empty, full] = started as [Started[], Started[]];
  const rss = await idleRssMiB([...empty, ...full].map((s) => s.proc.child.pid!), IDLE_SETTLE_MS);
  const figures = empty.flatMap((e, i) => {
    const rssMiB = { empty: rss[i]!, full: rss[empty.length + i]! };
    ctx.log(`    ${e.name} start-up ${e.startupMs} vs ${full[i]!.startupMs} ms, idle RSS ${rssMiB.empty} vs ${rssMiB.full} MiB`);
    return startFigures(`distributed: ${e.name}`, stored, { empty: e.startupMs, full: full[i]!.startupMs }, rssMiB);
  });
  const details = Object.fromEntries(empty.map((e, i) => [e.name, { startupMs: [e.startupMs, full[i]!.startupMs], rssMiB: [rss[i], rss[empty.length + i]] }]));
  return { figures, details };
}

async function distributed(ctx: BenchContext, stored: number, rounds: Rounds, upstreamUrl: string): Promise<BenchResult> {
  const gateways: GatewayUnderTest[] = [];
  const stores: Array<Awaited<ReturnType<typeof openNatsStore>>> = [];
  const started: Started[][] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const gw = await startBenchGateway("distributed", { upstreamUrl, extraConfig: { runner: RUNNER } });
      gateways.push(gw);
      stores.push(await openNatsStore(gw.nats!.url, gw.redis!.url));
    }
    const [, fullGw] = gateways as [GatewayUnderTest, GatewayUnderTest];
    const [emptyStore, fullStore] = stores as [(typeof stores)[0], (typeof stores)[0]];
    await emptyStore.repo.createMany([preview()]);
    await growSession(fullStore.repo, "bench:run10", 10);
    await growSession(fullStore.repo, "bench:run400", 400);
    const short = await requestsPerRun(fullGw, "bench:run10");
    const long = await requestsPerRun(fullGw, "bench:run400");
    ctx.log(`  JetStream requests on the session store per run: ${short.length} with 10 prior messages, ${long.length} with 400`);
    const written = performance.now();
    await fullStore.repo.createMany([preview(), ...manySessions(stored, "bench:s", 1)]);
    const feedNc = await connectNats({ url: fullGw.nats!.url });
    await indexFeedsDrained(feedNc).finally(() => feedNc.close());
    const populateMs = Math.round(performance.now() - written);
    ctx.log(`  distributed, empty store vs ${stored} sessions (written and indexed in ${populateMs} ms), every service restarted:`);
    const starts = await restarted(ctx, gateways, stored, started);
    const measured = await idleAndLoaded(ctx, "distributed", stored, started.map(edgeUrl), rounds);
    const perRun: Figure = {
      name: "distributed: JetStream requests per run, 400 prior messages vs 10",
      unit: "requests",
      gateway: long.length,
      baseline: short.length,
      ratio: short.length > 0 ? Math.round((long.length / short.length) * 1000) / 1000 : Number.NaN,
      target: "= 1",
      pass: long.length === short.length,
    };
    return {
      bench: "sessions-scale distributed",
      status: "ok",
      figures: [...measured.figures, ...starts.figures, perRun],
      details: { stored, rounds, populateMs, ...measured.details, services: starts.details, requestsPerRun: { prior10: short, prior400: long } },
    };
  } finally {
    for (const proc of started.flat()) await proc.proc.stop();
    for (const store of stores) await store.close();
    for (const gw of gateways) await gw.stop();
  }
}

export const sessionsScaleSuite: Suite = {
  name: "sessions-scale",
  async run(ctx) {
    const stored = ctx.args.quick ? 10_000 : 100_000;
    // Fewer requests under load, where each takes tens of milliseconds on this machine.
    const rounds = ctx.args.quick ? { idle: 200, loaded: 100 } : { idle: 2_000, loaded: 500 };
    const fake = spawnBench("servers/fake-openai.ts");
    try {
      const upstreamUrl = `http://127.0.0.1:${(await fake.waitLine(/listening (\d+)/))[1]}`;
      return [await embedded(ctx, stored, rounds, upstreamUrl), await distributed(ctx, stored, rounds, upstreamUrl)];
    } finally {
      await fake.stop();
    }
  },
};
