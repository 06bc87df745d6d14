import { type GatewayUnderTest, type Mode, routeExists, startBenchGateway, TOKEN } from "../lib/gateway.js";
import { runHttpLoad } from "../lib/http-load.js";
import { interleaved, roundTiming } from "../lib/rounds.js";
import { round } from "../lib/stats.js";
import { withUpstreams } from "../lib/upstreams.js";
import { atLeast, type BenchContext, type BenchResult, type Figure, info, notAvailable, type Suite } from "../lib/suite.js";
import type { LoadResult } from "../lib/ws-load.js";

const CONCURRENCY = 16;
const WIDE = 64;
// SPEC-shaped targets: the gateway may add this much to the median of one request at a time.
const ADDED_P50_TARGET_MS: Record<Mode, number> = { embedded: 1, distributed: 2 };
// Against the passthrough floor (bench/servers/passthrough.mjs): the share of its throughput the
// gateway reaches, and what it may add to its median, one request at a time.
const FLOOR_SHARE: Record<Mode, number> = { embedded: 0.7, distributed: 0.35 };
const FLOOR_ADDED_P50_MS: Record<Mode, number> = { embedded: 0.3, distributed: 1 };

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

/** Where the same request goes: the fake directly, through the passthrough floor, through the gateway. */
interface Targets {
  upstream: string;
  /** bench/servers/passthrough.mjs in front of the same fake (chat completions only). */
  floor: string;
}

const load = (target: { url: string; body: string; headers: Record<string, string> }, concurrency: number, ctx: BenchContext) =>
  () => runHttpLoad({ ...target, concurrency, ...roundTiming(ctx) });

async function measure(ctx: BenchContext, gw: GatewayUnderTest, targets: Targets, mode: Mode, api: keyof typeof APIS, stream: boolean) {
  const messages = [{ role: "user", content: "hello" }];
  // Either route makes the same upstream chat completion: what the gateway adds is the difference.
  const directBody = JSON.stringify({ model: "zero", messages, stream });
  const direct = { url: `${targets.upstream}/v1/chat/completions`, body: directBody, headers: {} };
  const floor = { url: `${targets.floor}/v1/chat/completions`, body: directBody, headers: {} };
  const through = {
    url: `${gw.httpUrl()}${APIS[api].path}`,
    body: JSON.stringify(APIS[api].body(stream)),
    headers: { authorization: `Bearer ${TOKEN}` },
  };
  // Throughput under load, latency one request at a time (queueing would swamp the added cost);
  // each measured in turn with its baselines, round after round (bench/lib/rounds.ts). Chat
  // completions are also measured against the passthrough floor, at 16 and 64 clients.
  const steps: Record<string, () => Promise<LoadResult>> = {
    directLoad: load(direct, CONCURRENCY, ctx),
    gatewayLoad: load(through, CONCURRENCY, ctx),
    directOne: load(direct, 1, ctx),
    gatewayOne: load(through, 1, ctx),
  };
  if (api === "chat") {
    Object.assign(steps, {
      floorLoad: load(floor, CONCURRENCY, ctx),
      floorOne: load(floor, 1, ctx),
      floorLoad64: load(floor, WIDE, ctx),
      gatewayLoad64: load(through, WIDE, ctx),
    });
  }
  const r = await interleaved(ctx, steps);
  const [directLoad, gatewayLoad, directOne, gatewayOne] = [r.directLoad!, r.gatewayLoad!, r.directOne!, r.gatewayOne!];
  const label = `${stream ? "streaming" : "non-streaming"} ${mode}`;
  ctx.log(
    `  ${label}: ${gatewayLoad.rps} vs ${directLoad.rps} req/s direct; ` +
      `one at a time p50 ${gatewayOne.p50Ms} vs ${directOne.p50Ms} ms ` +
      `(rounds ${gatewayOne.roundP50Ms?.join(", ")} vs ${directOne.roundP50Ms?.join(", ")})`,
  );
  if (gatewayLoad.ok === 0) throw new Error(`every request through the gateway failed (${gatewayLoad.errors})`);
  const figures: Figure[] = [
    info("throughput vs calling the fake directly", "req/s", gatewayLoad.rps, directLoad.rps),
    added("added p50 latency (one at a time)", gatewayOne.p50Ms, directOne.p50Ms, ADDED_P50_TARGET_MS[mode]),
    added("added p99 latency (one at a time)", gatewayOne.p99Ms, directOne.p99Ms, undefined),
  ];
  if (r.floorLoad && r.floorOne && r.floorLoad64 && r.gatewayLoad64) {
    ctx.log(
      `    vs passthrough: ${gatewayLoad.rps} vs ${r.floorLoad.rps} req/s at ${CONCURRENCY}, ` +
        `${r.gatewayLoad64.rps} vs ${r.floorLoad64.rps} at ${WIDE}; p50 ${gatewayOne.p50Ms} vs ${r.floorOne.p50Ms} ms`,
    );
    figures.push(
      atLeast(`throughput vs passthrough, ${CONCURRENCY} clients`, "req/s", gatewayLoad.rps, r.floorLoad.rps, FLOOR_SHARE[mode]),
      atLeast(`throughput vs passthrough, ${WIDE} clients`, "req/s", r.gatewayLoad64.rps, r.floorLoad64.rps, FLOOR_SHARE[mode]),
      added("added p50 over passthrough (one at a time)", gatewayOne.p50Ms, r.floorOne.p50Ms, FLOOR_ADDED_P50_MS[mode]),
    );
  }
  return {
    bench: `${APIS[api].path} ${label}`,
    status: "ok" as const,
    figures,
    details: { ...r, concurrency: CONCURRENCY, wide: WIDE, rounds: ctx.args.rounds },
  };
}

async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  await withUpstreams(async (targets) => {
    const { upstream } = targets;
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
              results.push(await measure(ctx, gw, targets, mode, api, stream));
            } catch (err) {
              results.push({ bench: `${APIS[api].path} ${mode}`, status: "failed", reason: (err as Error).message });
            }
          }
        }
      } finally {
        await gw.stop();
      }
    }
  });
  return results;
}

export const chatCompletionsSuite: Suite = { name: "chat-completions", run };
