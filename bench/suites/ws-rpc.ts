import type WebSocket from "ws";
import { connectSocket, type GatewayUnderTest, gatewayMethods, startBenchGateway } from "../lib/gateway.js";
import { runNatsLoad } from "../lib/nats-load.js";
import { spawnBench } from "../lib/procs.js";
import { atLeast, type BenchContext, type BenchResult, info, notAvailable, type Suite } from "../lib/suite.js";
import { interleaved, roundTiming } from "../lib/rounds.js";
import { type LoadResult, openSocket, requestOnce, runWsLoad } from "../lib/ws-load.js";

// The shape ENVIRONMENT.md's raw baselines were taken with: 16 clients x 8 requests in flight.
export const CLIENTS = 16;
export const IN_FLIGHT = 8;

export interface RpcCase {
  method: string;
  params: Record<string, unknown>;
  /** Methods that must exist for the case to run (the method itself and any seeding). */
  needs: string[];
  seed?(socket: WebSocket): Promise<void>;
}

const PREVIEW_KEY = "bench:preview";

export const CASES: RpcCase[] = [
  { method: "agents.list", params: {}, needs: ["agents.list"] },
  {
    method: "sessions.preview",
    params: { key: PREVIEW_KEY },
    needs: ["sessions.preview", "agent"],
    // A real session with a few messages, made through the API like any client would.
    seed: async (socket) => {
      for (let i = 0; i < 3; i++) {
        const id = 900 + i;
        const text = JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "agent",
          params: { message: `bench message ${i}`, sessionKey: PREVIEW_KEY },
        });
        const answer = await requestOnce(socket, text, id);
        if (answer.ok !== true) throw new Error(`seeding failed: ${JSON.stringify(answer.error)}`);
      }
    },
  },
];

export function requestFrame(method: string, params: Record<string, unknown>) {
  const head = `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${JSON.stringify(params)},"id":`;
  return (id: number) => `${head}${id}}`;
}

function figures(label: string, gw: LoadResult, raw: LoadResult, baselineName: string) {
  return [
    atLeast(`${label} throughput vs ${baselineName}`, "req/s", gw.rps, raw.rps, 0.5),
    info(`${label} p50 latency vs ${baselineName}`, "ms", gw.p50Ms, raw.p50Ms),
    info(`${label} p99 latency vs ${baselineName}`, "ms", gw.p99Ms, raw.p99Ms),
  ];
}

/**
 * Every available case of one mode against its baseline, measured in turn round after round
 * (bench/lib/rounds.ts), so the baseline and the gateway see the same machine.
 */
async function measureMode(
  ctx: BenchContext,
  gw: GatewayUnderTest,
  mode: string,
  baseline: { name: string; measure: () => Promise<LoadResult> },
): Promise<BenchResult[]> {
  const methods = await gatewayMethods(gw);
  const results: BenchResult[] = [];
  const cases: RpcCase[] = [];
  for (const c of CASES) {
    const missing = c.needs.filter((m) => !methods.has(m));
    if (missing.length > 0) {
      results.push(notAvailable(`ws-rpc ${c.method} (${mode})`, `the gateway has no ${missing.join(", ")} method`));
    } else {
      cases.push(c);
    }
  }
  for (const c of cases) await seed(gw, c);

  const steps: Record<string, () => Promise<LoadResult>> = { baseline: baseline.measure };
  for (const c of cases) {
    steps[c.method] = () =>
      runWsLoad({
        url: gw.wsUrl(),
        clients: CLIENTS,
        inFlight: IN_FLIGHT,
        ...roundTiming(ctx),
        frame: requestFrame(c.method, c.params),
        prepare: (socket) => connectSocket(socket).then(() => undefined),
        accept: (answer) => answer.ok === true,
      });
  }
  const measured = await interleaved(ctx, steps);
  const raw = measured.baseline!;
  ctx.log(`  ${baseline.name}: ${raw.rps} req/s (rounds ${raw.roundRps?.join(", ")}), p50 ${raw.p50Ms} ms`);
  for (const c of cases) {
    const bench = `ws-rpc ${c.method} (${mode})`;
    const result = measured[c.method]!;
    ctx.log(`  ${bench}: ${result.rps} req/s (rounds ${result.roundRps?.join(", ")}), p50 ${result.p50Ms} ms`);
    if (result.ok === 0) {
      results.push({ bench, status: "failed", reason: `every request failed (${result.errors})` });
      continue;
    }
    results.push({
      bench,
      status: "ok",
      figures: figures(`${c.method} ${mode}`, result, raw, baseline.name),
      details: { gateway: result, baseline: raw, clients: CLIENTS, inFlight: IN_FLIGHT, rounds: ctx.args.rounds },
    });
  }
  return results;
}

/** A case's data, made through the API like any client would, once before the rounds. */
export async function seed(gw: GatewayUnderTest, c: RpcCase): Promise<void> {
  if (!c.seed) return;
  const socket = await openSocket(gw.wsUrl());
  try {
    await connectSocket(socket);
    await c.seed(socket);
  } finally {
    socket.terminate();
  }
}

async function embedded(ctx: BenchContext): Promise<BenchResult[]> {
  const echo = spawnBench("servers/raw-ws-echo.ts");
  try {
    const port = (await echo.waitLine(/listening (\d+)/))[1];
    const measure = () =>
      runWsLoad({
        url: `ws://127.0.0.1:${port}/`,
        clients: CLIENTS,
        inFlight: IN_FLIGHT,
        ...roundTiming(ctx),
        frame: requestFrame("agents.list", {}),
        accept: () => true,
      });
    const gw = await startBenchGateway("embedded");
    try {
      return await measureMode(ctx, gw, "embedded", { name: "raw ws echo", measure });
    } finally {
      await gw.stop();
    }
  } finally {
    await echo.stop();
  }
}

async function distributed(ctx: BenchContext): Promise<BenchResult[]> {
  const gw = await startBenchGateway("distributed");
  try {
    const responder = spawnBench("servers/raw-nats-responder.ts", [gw.nats!.url, "bench.echo"]);
    try {
      await responder.waitLine(/ready/);
      const measure = () =>
        runNatsLoad({
          url: gw.nats!.url,
          subject: "bench.echo",
          concurrency: CLIENTS * IN_FLIGHT,
          ...roundTiming(ctx),
          payload: Buffer.from(requestFrame("agents.list", {})(1)),
        });
      return await measureMode(ctx, gw, "distributed", { name: "raw NATS req/reply", measure });
    } finally {
      await responder.stop();
    }
  } finally {
    await gw.stop();
  }
}

/** One mode's failure (say, a service that does not start) must not hide the other's figures. */
async function guarded(
  bench: string,
  ctx: BenchContext,
  fn: (ctx: BenchContext) => Promise<BenchResult[]>,
): Promise<BenchResult[]> {
  try {
    return await fn(ctx);
  } catch (err) {
    ctx.log(`  ${bench} failed: ${(err as Error).message}`);
    return [{ bench, status: "failed", reason: (err as Error).message.split("\n").slice(0, 2).join(" ") }];
  }
}

export const wsRpcSuite: Suite = {
  name: "ws-rpc",
  run: async (ctx) => [
    ...(await guarded("ws-rpc (embedded)", ctx, embedded)),
    ...(await guarded("ws-rpc (distributed)", ctx, distributed)),
  ],
};
