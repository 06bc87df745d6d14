import { type GatewayUnderTest, type Mode, routeExists, startBenchGateway, TOKEN } from "../lib/gateway.js";
import { runHttpLoad } from "../lib/http-load.js";
import { spawnBench } from "../lib/procs.js";
import { interleaved, roundTiming } from "../lib/rounds.js";
import { round } from "../lib/stats.js";
import { type BenchContext, type BenchResult, type Figure, info, notAvailable, type Suite } from "../lib/suite.js";

const CONCURRENCY = 16;
// SPEC-shaped targets: the gateway may add this much to the median of one request at a time.
const ADDED_P50_TARGET_MS: Record<Mode, number> = { embedded: 1, distributed: 2 };

function added(name: string, gateway: number, direct: number, maxMs: number | undefined): Figure {
  const diff = round(gateway - direct, 3);
  return {
    name,
    unit: "ms",
    gateway,
    baseline: direct,
    ratio: diff,
    target: maxMs === undefined ? "" : `added < ${maxMs} ms`,
    pass: maxMs === undefined ? null : diff < maxMs,
  };
}

/** The two OpenAI-compatible routes, each an agent run on the same upstream call. */
const APIS = {
  chat: { path: "/v1/chat/completions", body: (stream: boolean) => ({ model: "fast", messages: [{ role: "user", content: "hello" }], stream }) },
  responses: { path: "/v1/responses", body: (stream: boolean) => ({ model: "fast", input: "hello", stream }) },
} as const;

async function measure(ctx: BenchContext, gw: GatewayUnderTest, upstream: string, mode: Mode, api: keyof typeof APIS, stream: boolean) {
  const messages = [{ role: "user", content: "hello" }];
  const timing = roundTiming(ctx);
  // Either route makes the same upstream chat completion: what the gateway adds is the difference.
  const direct = {
    url: `${upstream}/v1/chat/completions`,
    body: JSON.stringify({ model: "zero", messages, stream }),
    headers: {},
  };
  const through = {
    url: `${gw.httpUrl()}${APIS[api].path}`,
    body: JSON.stringify(APIS[api].body(stream)),
    headers: { authorization: `Bearer ${TOKEN}` },
  };
  // Throughput under load, latency one request at a time (queueing would swamp the added cost);
  // each measured in turn with its baseline, round after round (bench/lib/rounds.ts).
  const { directLoad, gatewayLoad, directOne, gatewayOne } = await interleaved(ctx, {
    directLoad: () => runHttpLoad({ ...direct, concurrency: CONCURRENCY, ...timing }),
    gatewayLoad: () => runHttpLoad({ ...through, concurrency: CONCURRENCY, ...timing }),
    directOne: () => runHttpLoad({ ...direct, concurrency: 1, ...timing }),
    gatewayOne: () => runHttpLoad({ ...through, concurrency: 1, ...timing }),
  });
  const label = `${stream ? "streaming" : "non-streaming"} ${mode}`;
  ctx.log(
    `  ${label}: ${gatewayLoad.rps} vs ${directLoad.rps} req/s direct; ` +
      `one at a time p50 ${gatewayOne.p50Ms} vs ${directOne.p50Ms} ms ` +
      `(rounds ${gatewayOne.roundP50Ms?.join(", ")} vs ${directOne.roundP50Ms?.join(", ")})`,
  );
  if (gatewayLoad.ok === 0) throw new Error(`every request through the gateway failed (${gatewayLoad.errors})`);
  return {
    bench: `${APIS[api].path} ${label}`,
    status: "ok" as const,
    figures: [
      info("throughput vs calling the fake directly", "req/s", gatewayLoad.rps, directLoad.rps),
      added("added p50 latency (one at a time)", gatewayOne.p50Ms, directOne.p50Ms, ADDED_P50_TARGET_MS[mode]),
      added("added p99 latency (one at a time)", gatewayOne.p99Ms, directOne.p99Ms, undefined),
    ],
    details: { directLoad, gatewayLoad, directOne, gatewayOne, concurrency: CONCURRENCY, rounds: ctx.args.rounds },
  };
}

async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const fake = spawnBench("servers/fake-openai.ts");
  const results: BenchResult[] = [];
  try {
    const upstream = `http://127.0.0.1:${(await fake.waitLine(/listening (\d+)/))[1]}`;
    for (const mode of ["embedded", "distributed"] as const) {
      const gw = await startBenchGateway(mode, { upstreamUrl: upstream });
      try {
        if (!(await routeExists(gw, "POST", "/v1/chat/completions"))) {
          results.push(notAvailable(`/v1/chat/completions (${mode})`, "POST /v1/chat/completions does not exist yet"));
          continue;
        }
        for (const api of ["chat", "responses"] as const) {
          for (const stream of [false, true]) {
            try {
              results.push(await measure(ctx, gw, upstream, mode, api, stream));
            } catch (err) {
              results.push({ bench: `${APIS[api].path} ${mode}`, status: "failed", reason: (err as Error).message });
            }
          }
        }
      } finally {
        await gw.stop();
      }
    }
  } finally {
    await fake.stop();
  }
  return results;
}

export const chatCompletionsSuite: Suite = { name: "chat-completions", run };
