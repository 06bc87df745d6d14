import type WebSocket from "ws";
import { connectSocket, type GatewayUnderTest, gatewayMethods, startBenchGateway } from "../lib/gateway.js";
import { runNatsLoad } from "../lib/nats-load.js";
import { spawnBench } from "../lib/procs.js";
import { atLeast, type BenchContext, type BenchResult, info, notAvailable, type Suite } from "../lib/suite.js";
import { type LoadResult, requestOnce, runWsLoad } from "../lib/ws-load.js";

// The shape ENVIRONMENT.md's raw baselines were taken with: 16 clients x 8 requests in flight.
const CLIENTS = 16;
const IN_FLIGHT = 8;

interface RpcCase {
  method: string;
  params: Record<string, unknown>;
  /** Methods that must exist for the case to run (the method itself and any seeding). */
  needs: string[];
  seed?(socket: WebSocket): Promise<void>;
}

const PREVIEW_KEY = "bench:preview";

const CASES: RpcCase[] = [
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

function requestFrame(method: string, params: Record<string, unknown>) {
  const head = `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${JSON.stringify(params)},"id":`;
  return (id: number) => `${head}${id}}`;
}

function timing(ctx: BenchContext) {
  return { warmupMs: ctx.args.quick ? 300 : 1_000, durationMs: ctx.args.seconds * 1000 };
}

function figures(label: string, gw: LoadResult, raw: LoadResult, baselineName: string) {
  return [
    atLeast(`${label} throughput vs ${baselineName}`, "req/s", gw.rps, raw.rps, 0.5),
    info(`${label} p50 latency vs ${baselineName}`, "ms", gw.p50Ms, raw.p50Ms),
    info(`${label} p99 latency vs ${baselineName}`, "ms", gw.p99Ms, raw.p99Ms),
  ];
}

async function gatewayCases(
  ctx: BenchContext,
  gw: GatewayUnderTest,
  mode: string,
  baseline: { result: LoadResult; name: string },
): Promise<BenchResult[]> {
  const methods = await gatewayMethods(gw);
  const results: BenchResult[] = [];
  for (const c of CASES) {
    const bench = `ws-rpc ${c.method} (${mode})`;
    const missing = c.needs.filter((m) => !methods.has(m));
    if (missing.length > 0) {
      results.push(notAvailable(bench, `the gateway has no ${missing.join(", ")} method`));
      continue;
    }
    try {
      let seeded = false;
      const result = await runWsLoad({
        url: gw.wsUrl(),
        clients: CLIENTS,
        inFlight: IN_FLIGHT,
        ...timing(ctx),
        frame: requestFrame(c.method, c.params),
        prepare: async (socket) => {
          await connectSocket(socket);
          if (c.seed && !seeded) {
            seeded = true;
            await c.seed(socket);
          }
        },
        accept: (answer) => answer.ok === true,
      });
      ctx.log(`  ${bench}: ${result.rps} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`);
      if (result.errors > 0 && result.ok === 0) throw new Error(`every request failed (${result.errors})`);
      results.push({
        bench,
        status: "ok",
        figures: figures(`${c.method} ${mode}`, result, baseline.result, baseline.name),
        details: { gateway: result, baseline: baseline.result, clients: CLIENTS, inFlight: IN_FLIGHT },
      });
    } catch (err) {
      results.push({ bench, status: "failed", reason: (err as Error).message });
    }
  }
  return results;
}

async function embedded(ctx: BenchContext): Promise<BenchResult[]> {
  const echo = spawnBench("servers/raw-ws-echo.ts");
  let raw: LoadResult;
  try {
    const port = (await echo.waitLine(/listening (\d+)/))[1];
    raw = await runWsLoad({
      url: `ws://127.0.0.1:${port}/`,
      clients: CLIENTS,
      inFlight: IN_FLIGHT,
      ...timing(ctx),
      frame: requestFrame("agents.list", {}),
      accept: () => true,
    });
    ctx.log(`  raw ws echo: ${raw.rps} req/s, p50 ${raw.p50Ms} ms, p99 ${raw.p99Ms} ms`);
  } finally {
    await echo.stop();
  }
  const gw = await startBenchGateway("embedded");
  try {
    return await gatewayCases(ctx, gw, "embedded", { result: raw, name: "raw ws echo" });
  } finally {
    await gw.stop();
  }
}

async function distributed(ctx: BenchContext): Promise<BenchResult[]> {
  const gw = await startBenchGateway("distributed");
  try {
    const responder = spawnBench("servers/raw-nats-responder.ts", [gw.nats!.url, "bench.echo"]);
    let raw: LoadResult;
    try {
      await responder.waitLine(/ready/);
      raw = await runNatsLoad({
        url: gw.nats!.url,
        subject: "bench.echo",
        concurrency: CLIENTS * IN_FLIGHT,
        ...timing(ctx),
        payload: Buffer.from(requestFrame("agents.list", {})(1)),
      });
      ctx.log(`  raw NATS request/reply: ${raw.rps} req/s, p50 ${raw.p50Ms} ms, p99 ${raw.p99Ms} ms`);
    } finally {
      await responder.stop();
    }
    return await gatewayCases(ctx, gw, "distributed", { result: raw, name: "raw NATS req/reply" });
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
