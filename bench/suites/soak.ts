import { readFileSync } from "node:fs";
import { median } from "../lib/stats.js";
import { connectSocket, type GatewayUnderTest, startBenchGateway, TOKEN } from "../lib/gateway.js";
import { runHttpLoad } from "../lib/http-load.js";
import { eventLoopP99, type ProcessMemory, processMemoryMiB } from "../lib/metrics.js";
import { sleep, spawnBench } from "../lib/procs.js";
import { RunDriver } from "../lib/run-driver.js";
import { atMost, type BenchContext, type BenchResult, type Figure, type Suite } from "../lib/suite.js";
import { openSocket, requestOnce, runWsLoad } from "../lib/ws-load.js";

const BENCH = "soak (distributed, mixed load)";
const RSS_GROWTH_MAX = 1.05;
const LOOP_P99_MAX_MS = 50;
/** Sessions the runs write to; one of them is reset every second, so none grows without end. */
const RUN_SESSIONS = 16;
const RUN_DRIVERS = 4;
const RUNS_PER_DRIVER = 4;

/** Resident set size of a process, in MiB (`/proc/<pid>/status`), or NaN once it is gone. */
function rssMiB(pid: number | undefined): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * With GW_HEAP_SNAPSHOT_DIR set, every service was started with `--heapsnapshot-signal=SIGUSR2`
 * and writes a snapshot there on the signal: one after warm-up and one at the end, to compare.
 * Writing one grows the process's RSS, so such a run's RSS figures are void.
 */
async function snapshotHeaps(gw: GatewayUnderTest, settleMs = 0): Promise<void> {
  if (!process.env.GW_HEAP_SNAPSHOT_DIR) return;
  for (const o of gw.ops) o.proc.child.kill("SIGUSR2");
  // A process writes its snapshot on its own thread, blocked: it must not be stopped before.
  await sleep(settleMs);
}

const rounded = (v: number) => Math.round(v * 10) / 10;

interface Counts {
  ok: number;
  failed: number;
}

/** Agent runs (agent `slow`: one second of streamed chunks), `perDriver` at a time per socket. */
async function driveRuns(gw: GatewayUnderTest, until: () => boolean, counts: Counts): Promise<void> {
  const drivers = await Promise.all(Array.from({ length: RUN_DRIVERS }, (_, i) => RunDriver.open(gw.wsUrl(i % gw.edges.length))));
  let n = 0;
  const loop = async (driver: RunDriver) => {
    while (!until()) {
      const sessionKey = `soak:run:${n++ % RUN_SESSIONS}`;
      if (await driver.run({ message: "soak", sessionKey, agentId: "slow" })) counts.ok++;
      else counts.failed++;
    }
  };
  try {
    await Promise.all(drivers.flatMap((d) => Array.from({ length: RUNS_PER_DRIVER }, () => loop(d))));
  } finally {
    for (const d of drivers) d.close();
  }
}

/** Sockets opened, authenticated, asked one thing and closed, one after another (~10/s). */
async function churnConnections(gw: GatewayUnderTest, until: () => boolean, counts: Counts): Promise<void> {
  for (let i = 0; !until(); i++) {
    try {
      const socket = await openSocket(gw.wsUrl(i % gw.edges.length));
      try {
        await connectSocket(socket, "node");
        const answer = await requestOnce(socket, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "agents.list", params: {} }), 2);
        if (answer.ok === true) counts.ok++;
        else counts.failed++;
      } finally {
        socket.close();
      }
    } catch {
      counts.failed++;
    }
    await sleep(100);
  }
}

/** One `sessions.reset` a second over the runs' sessions, so their histories stay short. */
async function resetSessions(gw: GatewayUnderTest, until: () => boolean, counts: Counts): Promise<void> {
  const socket = await openSocket(gw.wsUrl());
  try {
    await connectSocket(socket, "control");
    for (let i = 0; !until(); i++) {
      const id = 1_000 + i;
      const frame = { jsonrpc: "2.0", id, method: "sessions.reset", params: { key: `soak:run:${i % RUN_SESSIONS}` } };
      const answer = await requestOnce(socket, JSON.stringify(frame), id).catch(() => ({ ok: false }));
      // A session no run has written to yet is unknown: not a failure of the gateway.
      if (answer.ok === true || (answer as { error?: { code?: string } }).error?.code === "NOT_FOUND") counts.ok++;
      else counts.failed++;
      await sleep(1_000);
    }
  } finally {
    socket.close();
  }
}

/** WS RPCs that cross the bus and read the runs' sessions, 4 sockets x 2 in flight. */
function rpcFrame(id: number): string {
  const calls = [
    { method: "agents.list", params: {} },
    { method: "sessions.list", params: { limit: 5 } },
    { method: "sessions.preview", params: { key: "soak:warm", limit: 5 } },
    { method: "agent.identity.get", params: {} },
  ];
  return JSON.stringify({ jsonrpc: "2.0", id, ...calls[id % calls.length] });
}

interface Sample {
  at: number;
  rss: Record<string, number>;
  /**
   * V8's heap in use (a leak climbs it), reserved (V8 sizing it up moves RSS, not a leak) and
   * memory outside it (Buffers), by process.
   */
  memory: Record<string, ProcessMemory>;
}

async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const totalMs = ctx.args.soakSeconds * 1000;
  const warmupMs = Math.max(5_000, totalMs * 0.2);
  const intervalMs = Math.min(5_000, Math.max(1_000, totalMs / 60));
  const fake = spawnBench("servers/fake-openai.ts");
  try {
    const upstreamUrl = `http://127.0.0.1:${(await fake.waitLine(/listening (\d+)/))[1]}`;
    // Every service a distributed deployment runs (docker-compose.yml), runners two as in issue 28.
    const gw = await startBenchGateway("distributed", { upstreamUrl, metrics: true, edges: 2, runners: 2, deliveryReplicas: 1, hooksReplicas: 1 });
    try {
      // The session the RPCs preview exists before the load starts.
      const warm = await RunDriver.open(gw.wsUrl());
      if (!(await warm.run({ message: "warm", sessionKey: "soak:warm", agentId: "fast" }))) throw new Error("the first run failed");
      warm.close();

      const started = Date.now();
      const until = () => Date.now() - started >= totalMs;
      const counts = { runs: { ok: 0, failed: 0 }, churn: { ok: 0, failed: 0 }, resets: { ok: 0, failed: 0 } };
      const samples: Sample[] = [];
      let warmedUp = false;
      const sampler = (async () => {
        while (!until()) {
          const at = Date.now() - started;
          if (!warmedUp && at >= warmupMs) {
            warmedUp = true;
            await snapshotHeaps(gw);
            // Resets each edge's event-loop histogram: the final scrape covers the soak after warm-up.
            await Promise.all(gw.edges.map((e) => eventLoopP99(e.metricsPort)));
          }
          const memory = await Promise.all(gw.ops.map((o) => processMemoryMiB(o.metricsPort).catch(() => processMemoryMiB(undefined))));
          samples.push({
            at,
            rss: Object.fromEntries(gw.ops.map((o) => [o.name, rounded(rssMiB(o.proc.child.pid))])),
            memory: Object.fromEntries(
              gw.ops.map((o, i) => [o.name, { heapUsed: rounded(memory[i]!.heapUsed), heapTotal: rounded(memory[i]!.heapTotal), external: rounded(memory[i]!.external), newSpace: rounded(memory[i]!.newSpace), gcSeconds: Math.round(memory[i]!.gcSeconds * 1000) / 1000 }]),
            ),
          });
          await sleep(intervalMs);
        }
      })();
      const [rpc, chat] = await Promise.all([
        runWsLoad({
          url: gw.wsUrl(1),
          clients: 4,
          inFlight: 2,
          warmupMs: 0,
          durationMs: totalMs,
          frame: rpcFrame,
          prepare: async (socket) => void (await connectSocket(socket)),
          accept: (answer) => answer.ok === true,
        }),
        runHttpLoad({
          url: `${gw.httpUrl()}/v1/chat/completions`,
          body: (() => {
            let n = 0;
            return () => JSON.stringify({ model: "fast", messages: [{ role: "user", content: "soak" }], stream: n++ % 2 === 0 });
          })(),
          headers: { authorization: `Bearer ${TOKEN}` },
          concurrency: 2,
          warmupMs: 0,
          durationMs: totalMs,
        }),
        driveRuns(gw, until, counts.runs),
        churnConnections(gw, until, counts.churn),
        resetSessions(gw, until, counts.resets),
      ]);
      await sampler;
      await snapshotHeaps(gw, 30_000);
      const loopP99 = await Promise.all(gw.edges.map(async (e) => rounded(await eventLoopP99(e.metricsPort))));
      return [report(ctx, { samples, warmupMs, loopP99, rpc, chat, counts })];
    } finally {
      await gw.stop();
    }
  } finally {
    await fake.stop();
  }
}

interface Measured {
  samples: Sample[];
  warmupMs: number;
  loopP99: number[];
  rpc: { ok: number; errors: number; rps: number };
  chat: { ok: number; errors: number; rps: number };
  counts: Record<"runs" | "churn" | "resets", Counts>;
}

/**
 * RSS growth of each process: the median of the samples in the first tenth of the time after
 * warm-up against the median of those in the last tenth (medians, so one GC does not decide).
 */
function report(ctx: BenchContext, m: Measured): BenchResult {
  const after = m.samples.filter((s) => s.at >= m.warmupMs);
  const span = (after.at(-1)?.at ?? 0) - (after[0]?.at ?? 0);
  const first = after.filter((s) => s.at <= after[0]!.at + span * 0.1);
  const last = after.filter((s) => s.at >= after.at(-1)!.at - span * 0.1);
  const figures: Figure[] = [];
  const rss: Record<string, Record<string, number | string>> = {};
  const startEnd = (pick: (s: Sample) => number) => `${rounded(median(first.map(pick)))} -> ${rounded(median(last.map(pick)))}`;
  for (const name of Object.keys(after[0]?.rss ?? {})) {
    const start = rounded(median(first.map((s) => s.rss[name]!)));
    const end = rounded(median(last.map((s) => s.rss[name]!)));
    // The heap in use is a sawtooth between collections: its low points, over each half of the
    // time after warm-up, show whether what survives a collection grows.
    const half = after.filter((s) => s.at <= after[0]!.at + span / 2);
    const heapLowFirstHalf = rounded(Math.min(...half.map((s) => s.memory[name]!.heapUsed)));
    const heapLowSecondHalf = rounded(Math.min(...after.filter((s) => !half.includes(s)).map((s) => s.memory[name]!.heapUsed)));
    const heapTotal = startEnd((s) => s.memory[name]!.heapTotal);
    const newSpace = startEnd((s) => s.memory[name]!.newSpace);
    const external = startEnd((s) => s.memory[name]!.external);
    // A major collection can be minutes apart, longer than a tenth: each half's median RSS and
    // the range show where in that sawtooth the two tenths fell.
    const rssHalves = `${rounded(median(half.map((s) => s.rss[name]!)))} -> ${rounded(median(after.filter((s) => !half.includes(s)).map((s) => s.rss[name]!)))}`;
    const rssRange = `${rounded(Math.min(...after.map((s) => s.rss[name]!)))}-${rounded(Math.max(...after.map((s) => s.rss[name]!)))}`;
    rss[name] = { afterWarmupMiB: start, endMiB: end, rssHalves, rssRange, heapLowFirstHalf, heapLowSecondHalf, heapTotal, newSpace, external };
    figures.push(atMost(`RSS at the end vs after warm-up, ${name}`, "MiB", end, start, RSS_GROWTH_MAX));
    ctx.log(
      `  ${name}: RSS ${start} -> ${end} MiB (halves ${rssHalves}, range ${rssRange}); V8 heap in use at its lowest ` +
        `${heapLowFirstHalf} -> ${heapLowSecondHalf} MiB, reserved ${heapTotal} MiB (young ${newSpace}); external ${external} MiB`,
    );
  }
  m.loopP99.forEach((p99, i) => {
    figures.push(atMost(`event-loop delay p99 after warm-up vs ${LOOP_P99_MAX_MS} ms, edge-${i}`, "ms", p99, LOOP_P99_MAX_MS, 1));
    ctx.log(`  edge-${i}: event-loop delay p99 ${p99} ms`);
  });
  const ok = m.rpc.ok + m.chat.ok + m.counts.runs.ok + m.counts.churn.ok + m.counts.resets.ok;
  const failed = m.rpc.errors + m.chat.errors + m.counts.runs.failed + m.counts.churn.failed + m.counts.resets.failed;
  figures.push(atMost("failed requests vs all requests", "requests", failed, ok + failed, 0));
  ctx.log(`  requests: ${ok} ok, ${failed} failed (rpc ${m.rpc.rps}/s, chat ${m.chat.rps}/s, runs ${m.counts.runs.ok})`);
  return {
    bench: BENCH,
    status: "ok",
    figures,
    details: {
      seconds: ctx.args.soakSeconds,
      warmupSeconds: m.warmupMs / 1000,
      rss,
      edgeLoopP99Ms: m.loopP99,
      rpc: { ok: m.rpc.ok, errors: m.rpc.errors, rps: m.rpc.rps },
      chatCompletions: { ok: m.chat.ok, errors: m.chat.errors, rps: m.chat.rps },
      ...m.counts,
      samples: m.samples,
      load:
        "4 sockets x 2 WS RPCs in flight; 4 sockets x 4 agent runs in flight (agent slow: 50 chunks 20 ms apart) " +
        "over 16 sessions, one reset a second; 2 chat completions in flight (agent fast, streaming and not); " +
        "a socket opened, connected, asked agents.list and closed every 100 ms; 2 edges, 2 runners, 1 sessions, 1 delivery, 1 hooks",
    },
  };
}

/** Opt-in: runs only when named (`--only soak`), for `--soak-seconds` (default 600, 30 with --quick). */
export const soakSuite: Suite = { name: "soak", run, optIn: true };
