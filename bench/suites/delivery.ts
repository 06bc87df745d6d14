import { DEFAULT_TELEGRAM_BOTS } from "@gw/testing";
import { type GatewayUnderTest, type Mode, routeExists, startBenchGateway, TOKEN } from "../lib/gateway.js";
import { runHttpLoad } from "../lib/http-load.js";
import { spawnBench } from "../lib/procs.js";
import { interleaved, roundTiming } from "../lib/rounds.js";
import { round } from "../lib/stats.js";
import { atLeast, type BenchContext, type BenchResult, type Figure, info, notAvailable, type Suite } from "../lib/suite.js";

const CONCURRENCY = 16;
const BOT = DEFAULT_TELEGRAM_BOTS[0]!;
/** The private chats bench/servers/fake-telegram.ts adds (5001..5064). */
const CHATS = 64;

let sequence = 0;
/** The next chat, round robin: one chat's sends go out one after another by design (order). */
const nextChat = () => 5001 + (sequence++ % CHATS);

function added(name: string, gateway: number, direct: number): Figure {
  return { name, unit: "ms", gateway, baseline: direct, ratio: round(gateway - direct, 3), target: "", pass: null };
}

async function measure(ctx: BenchContext, gw: GatewayUnderTest, platform: string, relay: string, mode: Mode): Promise<BenchResult> {
  const timing = roundTiming(ctx);
  // The same client (node:http, keep-alive) posts the same message: to the platform itself, or
  // as a `send` request frame to POST /api/send, each with a key of its own (idempotency on).
  const direct = {
    url: `${platform}/bot${BOT.token}/sendMessage`,
    body: () => JSON.stringify({ chat_id: nextChat(), text: "bench message" }),
    headers: {},
  };
  const run = Date.now();
  const through = {
    url: `${gw.httpUrl()}/api/send`,
    body: () => {
      const to = String(nextChat());
      return JSON.stringify({ method: "send", params: { to, message: "bench message", idempotencyKey: `bench-${run}-${sequence}` } });
    },
    headers: { authorization: `Bearer ${TOKEN}` },
  };
  // The same frames to the bare relay (bench/servers/bare-relay.ts): the two HTTP hops alone.
  const bare = { ...through, url: `${relay}/api/send`, headers: {} };
  const { directLoad, gatewayLoad, relayLoad, directOne, gatewayOne } = await interleaved(ctx, {
    directLoad: () => runHttpLoad({ ...direct, concurrency: CONCURRENCY, ...timing }),
    gatewayLoad: () => runHttpLoad({ ...through, concurrency: CONCURRENCY, ...timing }),
    relayLoad: () => runHttpLoad({ ...bare, concurrency: CONCURRENCY, ...timing }),
    directOne: () => runHttpLoad({ ...direct, concurrency: 1, ...timing }),
    gatewayOne: () => runHttpLoad({ ...through, concurrency: 1, ...timing }),
  });
  ctx.log(
    `  ${mode}: ${gatewayLoad.rps} vs ${directLoad.rps} sends/s direct, ${relayLoad.rps} through a bare relay (errors ${gatewayLoad.errors}); ` +
      `one at a time p50 ${gatewayOne.p50Ms} vs ${directOne.p50Ms} ms`,
  );
  if (gatewayLoad.ok === 0) throw new Error(`every send through the gateway failed (${gatewayLoad.errors})`);
  return {
    bench: `delivery send ${mode}`,
    status: "ok",
    figures: [
      atLeast("sends/s vs calling the platform directly", "req/s", gatewayLoad.rps, directLoad.rps, 0.5),
      info("a bare Node relay's sends/s vs direct (the floor of two HTTP hops)", "req/s", relayLoad.rps, directLoad.rps),
      info("sends/s vs the bare relay", "req/s", gatewayLoad.rps, relayLoad.rps),
      added("added p50 latency (one at a time)", gatewayOne.p50Ms, directOne.p50Ms),
      info("p99 latency (one at a time)", "ms", gatewayOne.p99Ms, directOne.p99Ms),
    ],
    details: { directLoad, gatewayLoad, relayLoad, directOne, gatewayOne, concurrency: CONCURRENCY, rounds: ctx.args.rounds },
  };
}

/**
 * `send` through the gateway (POST /api/send: edge, bus, delivery with idempotency claims and
 * per-part records in the FastStore, the Telegram plugin) to a local fake of the Telegram Bot
 * API, against the same client calling the fake directly. Pacing is off (`delivery.pacing`):
 * Telegram's 30 messages/s per bot would measure the limit, not the gateway. A bare relay
 * (bench/servers/bare-relay.ts: one HTTP request in, one out, nothing else) is measured in the
 * same rounds: on a machine where client, gateway and platform share the cores, it shows what
 * the two HTTP hops alone cost against direct calls.
 */
async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const fake = spawnBench("servers/fake-telegram.ts");
  let relayProcess: ReturnType<typeof spawnBench> | undefined;
  const results: BenchResult[] = [];
  try {
    const platform = `http://127.0.0.1:${(await fake.waitLine(/listening (\d+)/))[1]}`;
    relayProcess = spawnBench("servers/bare-relay.ts", [platform, BOT.token]);
    const relay = `http://127.0.0.1:${(await relayProcess.waitLine(/listening (\d+)/))[1]}`;
    const channels = { default: "tg", tg: { kind: "telegram", botToken: BOT.token, apiBaseUrl: platform } };
    for (const mode of ["embedded", "distributed"] as const) {
      const gw = await startBenchGateway(mode, { extraConfig: { channels, delivery: { pacing: "off" } } });
      try {
        if (!(await routeExists(gw, "POST", "/api/send"))) {
          results.push(notAvailable(`delivery send ${mode}`, "POST /api/send does not exist yet"));
          continue;
        }
        results.push(await measure(ctx, gw, platform, relay, mode));
      } catch (err) {
        results.push({ bench: `delivery send ${mode}`, status: "failed", reason: (err as Error).message });
      } finally {
        await gw.stop();
      }
    }
  } finally {
    await relayProcess?.stop();
    await fake.stop();
  }
  return results;
}

export const deliverySuite: Suite = { name: "delivery", run };
