import { connectSocket, type GatewayUnderTest, gatewayMethods, startBenchGateway, subscribeAll } from "../lib/gateway.js";
import { sleep, spawnBench } from "../lib/procs.js";
import { RunDriver } from "../lib/run-driver.js";
import { Samples } from "../lib/stats.js";
import { atLeast, type BenchContext, type BenchResult, info, notAvailable, type Suite } from "../lib/suite.js";
import { openSocket } from "../lib/ws-load.js";
import type WebSocket from "ws";

const CLIENTS = 50;
const RUNS_IN_FLIGHT = 8;
/** Latency runs: agent `stamp` (50 chunks 10 ms apart), so RUNS_IN_FLIGHT x 100 chunks/s reach each client. */
const STAMP_GAP_MS = 10;

const STAMP = /"text":"t(\d+\.\d+) "/;
/** One chunk of agent `burst`'s answer (the fake upstream's `word<n> `). */
const CHUNK_WORD = /word\d+ /g;

/** Records, for every stamped chunk a socket receives, how long ago it was stamped. */
function recordLatency(socket: WebSocket, samples: Samples, measuring: () => boolean): void {
  socket.on("message", (data) => {
    if (!measuring()) return;
    const match = STAMP.exec(String(data));
    if (match) samples.add(performance.timeOrigin + performance.now() - Number(match[1]));
  });
}

/** Baseline: a bare `ws` server stamping and sending a chunk to CLIENTS sockets at the same rate. */
async function rawLatency(ctx: BenchContext): Promise<{ p50: number; p99: number; samples: number }> {
  const server = spawnBench("servers/raw-ws-fanout.ts");
  try {
    const port = (await server.waitLine(/listening (\d+)/))[1];
    const sockets = await Promise.all(Array.from({ length: CLIENTS }, () => openSocket(`ws://127.0.0.1:${port}/`)));
    const samples = new Samples();
    for (const socket of sockets) recordLatency(socket, samples, () => true);
    const gapMs = Math.max(1, Math.round(STAMP_GAP_MS / RUNS_IN_FLIGHT));
    const count = Math.round((ctx.args.seconds * 1000) / gapMs);
    sockets[0]!.send(`stamp ${count} ${gapMs}`);
    const deadline = Date.now() + ctx.args.seconds * 3000 + 10_000;
    while (samples.size < count * CLIENTS && Date.now() < deadline) await sleep(50);
    for (const socket of sockets) socket.terminate();
    return { ...samples.summary(), samples: samples.size };
  } finally {
    await server.stop();
  }
}

/**
 * Upstream-to-client latency of assistant chunks through the gateway: the fake upstream stamps
 * each chunk as it writes it, CLIENTS control connections on one edge note when it arrives. It
 * bounds runner-to-client latency from above (it adds the upstream-to-runner hop). The watchers
 * ask for every run's events (the firehose).
 */
async function gatewayLatency(ctx: BenchContext, gw: GatewayUnderTest) {
  const samples = new Samples();
  let measuring = false;
  const watchers = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const socket = await openSocket(gw.wsUrl());
      await connectSocket(socket, "control");
      await subscribeAll(socket);
      recordLatency(socket, samples, () => measuring);
      return socket;
    }),
  );
  const driver = await RunDriver.open(gw.wsUrl());
  let stopped = false;
  let failedRuns = 0;
  const loop = async (k: number) => {
    for (let n = 0; !stopped; n++) {
      if (!(await driver.run({ agentId: "stamp", message: "go", sessionKey: `bench:lat:${k}:${n}` }))) failedRuns++;
    }
  };
  const loops = Array.from({ length: RUNS_IN_FLIGHT }, (_, k) => loop(k));
  await sleep(ctx.args.quick ? 300 : 1_000);
  measuring = true;
  await sleep(ctx.args.seconds * 1000);
  measuring = false;
  stopped = true;
  await Promise.all(loops);
  driver.close();
  for (const socket of watchers) socket.terminate();
  return { ...samples.summary(), samples: samples.size, failedRuns };
}

async function latency(ctx: BenchContext, upstreamUrl: string): Promise<BenchResult[]> {
  const raw = await rawLatency(ctx);
  ctx.log(`  raw ws stamped fan-out latency: p50 ${raw.p50} ms, p99 ${raw.p99} ms (${raw.samples} samples)`);
  const results: BenchResult[] = [];
  for (const mode of ["embedded", "distributed"] as const) {
      const bench = `event fan-out latency (one edge, ${mode})`;
      const gw = await startBenchGateway(mode, { upstreamUrl });
      try {
        const measured = await gatewayLatency(ctx, gw);
        ctx.log(`  ${mode}: upstream-to-client p50 ${measured.p50} ms, p99 ${measured.p99} ms (${measured.samples} samples)`);
        if (measured.samples === 0) throw new Error(`no stamped chunk arrived (${measured.failedRuns} runs failed)`);
        results.push({
          bench,
          status: "ok",
          figures: [
            info("upstream-to-client latency p50 vs raw ws", "ms", measured.p50, raw.p50),
            info("upstream-to-client latency p99 vs raw ws", "ms", measured.p99, raw.p99),
          ],
          details: { clients: CLIENTS, runsInFlight: RUNS_IN_FLIGHT, gateway: measured, raw },
        });
      } catch (err) {
        results.push({ bench, status: "failed", reason: (err as Error).message });
      } finally {
        await gw.stop();
      }
    }
  return results;
}

/** Chunks per second a bare `ws` server delivers to CLIENTS sockets, counted at the clients. */
async function rawFanOut(ctx: BenchContext): Promise<{ chunksPerSecond: number; delivered: number }> {
  const server = spawnBench("servers/raw-ws-fanout.ts");
  try {
    const port = (await server.waitLine(/listening (\d+)/))[1];
    const sockets = await Promise.all(Array.from({ length: CLIENTS }, () => openSocket(`ws://127.0.0.1:${port}/`)));
    const perBurst = ctx.args.quick ? 500 : 2_000;
    const bursts = ctx.args.quick ? 2 : 10;
    let delivered = 0;
    for (const socket of sockets) socket.on("message", () => delivered++);
    const started = performance.now();
    for (let b = 0; b < bursts; b++) {
      const target = delivered + perBurst * CLIENTS;
      sockets[0]!.send(`go ${perBurst}`);
      const deadline = Date.now() + 60_000;
      while (delivered < target && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    }
    const seconds = (performance.now() - started) / 1000;
    for (const socket of sockets) socket.terminate();
    return { chunksPerSecond: Math.round(delivered / seconds), delivered };
  } finally {
    await server.stop();
  }
}

/**
 * Assistant chunks per second one embedded gateway delivers to CLIENTS control connections (each
 * subscribed to every run's events, the firehose) while a driver keeps RUNS_IN_FLIGHT runs of agent `burst` going:
 * 200 chunks as fast as the fake upstream sends them, so a run's own fixed costs (creating its
 * session, an fsync'd append) do not hide the fan-out being measured.
 */
async function gatewayFanOut(ctx: BenchContext, gw: GatewayUnderTest) {
  const watchers = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const socket = await openSocket(gw.wsUrl());
      await connectSocket(socket, "control");
      await subscribeAll(socket);
      return socket;
    }),
  );
  let delivered = 0;
  // Counted without parsing, like the raw clients count theirs: each of the upstream's chunks is
  // one `word<n> `, and a runner that falls behind sends a turn's chunks as one event (SPEC §6:
  // chunks concatenate), so an event carries one chunk or several.
  for (const socket of watchers) {
    socket.on("message", (data) => {
      const text = String(data);
      if (text.includes('"stream":"assistant"')) delivered += text.match(CHUNK_WORD)?.length ?? 0;
    });
  }
  const driver = await RunDriver.open(gw.wsUrl());
  let stopped = false;
  let runs = 0;
  let failedRuns = 0;
  const loop = async (k: number) => {
    for (let n = 0; !stopped; n++) {
      const ok = await driver.run({ agentId: "burst", message: "go", sessionKey: `bench:fan:${k}:${n}` });
      if (ok) runs++;
      else failedRuns++;
    }
  };
  const loops = Array.from({ length: RUNS_IN_FLIGHT }, (_, k) => loop(k));
  await sleep(ctx.args.quick ? 300 : 1_000);
  const [startDelivered, startRuns] = [delivered, runs];
  const started = performance.now();
  await sleep(ctx.args.seconds * 1000);
  const seconds = (performance.now() - started) / 1000;
  const [windowDelivered, windowRuns] = [delivered - startDelivered, runs - startRuns];
  stopped = true;
  await Promise.all(loops);
  driver.close();
  for (const socket of watchers) socket.terminate();
  return {
    chunksPerSecond: Math.round(windowDelivered / seconds),
    runsPerSecond: Math.round(windowRuns / seconds),
    failedRuns,
  };
}

/** Event fan-out: assistant chunks per second one edge delivers, against raw `ws` send throughput. */
async function throughput(ctx: BenchContext, upstreamUrl: string): Promise<BenchResult[]> {
  const bench = "event fan-out (one edge, embedded)";
  const gw = await startBenchGateway("embedded", { upstreamUrl });
  try {
    if (!(await gatewayMethods(gw)).has("agent")) {
      return [notAvailable(bench, "the gateway has no agent method (run events) yet")];
    }
    const gateway = await gatewayFanOut(ctx, gw);
    ctx.log(
      `  gateway fan-out: ${gateway.chunksPerSecond} chunks/s to ${CLIENTS} clients (${gateway.runsPerSecond} runs/s)`,
    );
    const raw = await rawFanOut(ctx);
    ctx.log(`  raw ws fan-out: ${raw.chunksPerSecond} chunks/s to ${CLIENTS} clients`);
    if (gateway.failedRuns > 0) ctx.log(`  ${gateway.failedRuns} runs failed`);
    return [
      {
        bench,
        status: "ok",
        figures: [
          atLeast(
            "assistant chunks delivered per second vs raw ws",
            "chunks/s",
            gateway.chunksPerSecond,
            raw.chunksPerSecond,
            0.5,
          ),
        ],
        details: {
          clients: CLIENTS,
          runsInFlight: RUNS_IN_FLIGHT,
          gateway,
          raw,
        },
      },
    ];
  } finally {
    await gw.stop();
  }
}

export const fanOutSuite: Suite = {
  name: "fan-out",
  run: async (ctx) => {
    const fake = spawnBench("servers/fake-openai.ts");
    try {
      const upstreamUrl = `http://127.0.0.1:${(await fake.waitLine(/listening (\d+)/))[1]}`;
      return [...(await throughput(ctx, upstreamUrl)), ...(await latency(ctx, upstreamUrl))];
    } finally {
      await fake.stop();
    }
  },
};
