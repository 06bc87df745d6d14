import { DEFAULT_TELEGRAM_BOTS } from "@gw/testing";
import { type GatewayUnderTest, type Mode, routeExists, startBenchGateway, TOKEN } from "../lib/gateway.js";
import { runHttpLoad } from "../lib/http-load.js";
import { spawnBench } from "../lib/procs.js";
import { cpuMicros } from "../lib/system.js";
import { interleaved, roundTiming } from "../lib/rounds.js";
import { round } from "../lib/stats.js";
import type { LoadResult } from "../lib/ws-load.js";
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

/**
 * A load step that also counts the CPU time the given processes use while it runs, per send
 * made (warm-up included: the processes worked for those sends too).
 */
function withCpu(pids: number[], timing: { warmupMs: number; durationMs: number }, step: () => Promise<LoadResult>) {
  const used = { micros: 0, sends: 0 };
  const measured = async () => {
    const before = pids.map(cpuMicros);
    const result = await step();
    used.micros += pids.reduce((sum, pid, i) => sum + cpuMicros(pid) - before[i]!, 0);
    used.sends += result.ok * ((timing.warmupMs + timing.durationMs) / timing.durationMs);
    return result;
  };
  return { measured, perSend: () => (used.sends > 0 ? Math.round(used.micros / used.sends) : 0) };
}

async function measure(
  ctx: BenchContext,
  gw: GatewayUnderTest,
  platform: string,
  relay: { url: string; pid: number },
  mode: Mode,
): Promise<BenchResult> {
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
  const bare = { ...through, url: `${relay.url}/api/send`, headers: {} };
  // The gateway's processes (the one process, or the edge and delivery) and the relay's.
  const gatewayPids = [...gw.edges.map((edge) => edge.proc.child.pid!), ...(gw.delivery ?? []).map((p) => p.child.pid!)];
  const loads = {
    direct: () => runHttpLoad({ ...direct, concurrency: CONCURRENCY, ...timing }),
    gateway: () => runHttpLoad({ ...through, concurrency: CONCURRENCY, ...timing }),
    relay: () => runHttpLoad({ ...bare, concurrency: CONCURRENCY, ...timing }),
  };
  // Each load once first, its result dropped: a server started for the benchmark is still
  // compiling its hot paths and filling its connection pools for its first few thousand
  // requests (the gateway's first round ran at half its later rate), which one that has been up
  // for a while did long ago.
  for (const load of Object.values(loads)) await load();
  const gatewayCpu = withCpu(gatewayPids, timing, loads.gateway);
  const relayCpu = withCpu([relay.pid], timing, loads.relay);
  const { directLoad, gatewayLoad, relayLoad, directOne, gatewayOne } = await interleaved(ctx, {
    directLoad: loads.direct,
    gatewayLoad: gatewayCpu.measured,
    relayLoad: relayCpu.measured,
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
      info(
        mode === "embedded" ? "CPU per send: the gateway process vs the bare relay" : "CPU per send: edge + delivery vs the bare relay",
        "µs",
        gatewayCpu.perSend(),
        relayCpu.perSend(),
      ),
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
    const relay = { url: `http://127.0.0.1:${(await relayProcess.waitLine(/listening (\d+)/))[1]}`, pid: relayProcess.child.pid! };
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
