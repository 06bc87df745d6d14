import { type GatewayUnderTest, type Mode, startBenchGateway, TOKEN } from "../lib/gateway.js";
import { runHttpLoad } from "../lib/http-load.js";
import { spawnBench } from "../lib/procs.js";
import { interleaved, roundTiming } from "../lib/rounds.js";
import { round } from "../lib/stats.js";
import type { BenchContext, BenchResult, Figure, Suite } from "../lib/suite.js";

/**
 * What a cooling provider costs a run: agent `fallback` is ["cold/limited", "fake/zero"], whose
 * first provider answered one 429 with Retry-After 600 and cools; agent `fast` is "fake/zero"
 * alone. Both make the same one upstream call: the difference is the router's cooldown read
 * (memory embedded, one Redis round trip distributed) and its skip. One request at a time.
 */
const ADDED_P50_TARGET_MS: Record<Mode, number> = { embedded: 1, distributed: 1 };

function added(name: string, gateway: number, direct: number, maxMs: number | undefined): Figure {
  const diff = round(gateway - direct, 3);
  const target = maxMs === undefined ? "" : `added < ${maxMs} ms`;
  return { name, unit: "ms", gateway, baseline: direct, ratio: diff, target, pass: maxMs === undefined ? null : diff < maxMs };
}

const request = (gw: GatewayUnderTest, model: string) => ({
  url: `${gw.httpUrl()}/v1/chat/completions`,
  body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }], stream: false }),
  headers: { authorization: `Bearer ${TOKEN}` },
});

async function measure(ctx: BenchContext, gw: GatewayUnderTest, mode: Mode): Promise<BenchResult> {
  // The first run meets the 429 and cools the key; every later one skips it without a call.
  const warm = request(gw, "fallback");
  const first = await fetch(warm.url, { method: "POST", body: warm.body, headers: { ...warm.headers, "content-type": "application/json" } });
  if (!first.ok) throw new Error(`the first fallback run failed: HTTP ${first.status} ${await first.text()}`);
  const timing = roundTiming(ctx);
  const { direct, cooling } = await interleaved(ctx, {
    direct: () => runHttpLoad({ ...request(gw, "fast"), concurrency: 1, ...timing }),
    cooling: () => runHttpLoad({ ...request(gw, "fallback"), concurrency: 1, ...timing }),
  });
  ctx.log(`  ${mode}: first provider cooling p50 ${cooling.p50Ms} ms vs the second alone ${direct.p50Ms} ms (p99 ${cooling.p99Ms} vs ${direct.p99Ms})`);
  if (cooling.ok === 0 || direct.ok === 0) throw new Error(`requests failed (${cooling.errors} / ${direct.errors})`);
  return {
    bench: `run whose first provider is cooling down, ${mode}`,
    status: "ok",
    figures: [
      added("added p50 vs the second provider alone", cooling.p50Ms, direct.p50Ms, ADDED_P50_TARGET_MS[mode]),
      added("added p99 vs the second provider alone", cooling.p99Ms, direct.p99Ms, undefined),
    ],
    details: { direct, cooling, rounds: ctx.args.rounds },
  };
}

async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const fake = spawnBench("servers/fake-openai.ts");
  const results: BenchResult[] = [];
  try {
    const upstream = `http://127.0.0.1:${(await fake.waitLine(/listening (\d+)/))[1]}`;
    for (const mode of ["embedded", "distributed"] as const) {
      const gw = await startBenchGateway(mode, {
        upstreamUrl: upstream,
        agents: [{ id: "fallback", name: "Fallback", model: ["cold/limited", "fake/zero"], description: "first provider cooling" }],
        providers: { cold: { kind: "openai", baseUrl: `${upstream}/v1`, apiKey: "bench-cold" } },
      });
      try {
        results.push(await measure(ctx, gw, mode));
      } catch (err) {
        results.push({ bench: `run whose first provider is cooling down, ${mode}`, status: "failed", reason: (err as Error).message });
      } finally {
        await gw.stop();
      }
    }
  } finally {
    await fake.stop();
  }
  return results;
}

export const modelFallbackSuite: Suite = { name: "model-fallback", run };
