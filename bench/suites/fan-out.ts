import { connectSocket, type GatewayUnderTest, gatewayMethods, startBenchGateway } from "../lib/gateway.js";
import { sleep, spawnBench } from "../lib/procs.js";
import { RunDriver } from "../lib/run-driver.js";
import { atLeast, type BenchContext, type BenchResult, notAvailable, type Suite } from "../lib/suite.js";
import { openSocket } from "../lib/ws-load.js";

const CLIENTS = 50;
const RUNS_IN_FLIGHT = 8;

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
 * receives every run's events) while a driver keeps RUNS_IN_FLIGHT `builtin/echo` runs going.
 */
async function gatewayFanOut(ctx: BenchContext, gw: GatewayUnderTest) {
  const watchers = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const socket = await openSocket(gw.wsUrl());
      await connectSocket(socket, "control");
      return socket;
    }),
  );
  let delivered = 0;
  // Counted without parsing, like the raw clients count theirs.
  for (const socket of watchers) {
    socket.on("message", (data) => {
      if (String(data).includes('"stream":"assistant"')) delivered++;
    });
  }
  const driver = await RunDriver.open(gw.wsUrl());
  const message = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
  let stopped = false;
  let runs = 0;
  let failedRuns = 0;
  const loop = async (k: number) => {
    for (let n = 0; !stopped; n++) {
      const ok = await driver.run({ message, sessionKey: `bench:fan:${k}:${n}` });
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

/**
 * Event fan-out: assistant chunks per second one edge delivers, against raw `ws` send throughput.
 * Runner-to-client latency needs a timestamp in run events, which they do not carry yet.
 */
async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const bench = "event fan-out (one edge, embedded)";
  const gw = await startBenchGateway("embedded");
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
          latency: "not measurable yet: run events carry no timestamp",
        },
      },
    ];
  } finally {
    await gw.stop();
  }
}

export const fanOutSuite: Suite = { name: "fan-out", run };
