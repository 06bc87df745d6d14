import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { connectSocket, type GatewayUnderTest, startBenchGateway } from "../lib/gateway.js";
import { interleaved, roundTiming } from "../lib/rounds.js";
import { type BenchContext, type BenchResult, info, type Suite } from "../lib/suite.js";
import { type LoadResult, runWsLoad } from "../lib/ws-load.js";
import { CASES, CLIENTS, IN_FLIGHT, requestFrame, seed } from "./ws-rpc.js";

/** A collector that takes every OTLP export and throws it away, counting the exports. */
async function discardingCollector(): Promise<{ url: string; exports: () => number; close(): Promise<void> }> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      exports++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    exports: () => exports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function load(ctx: BenchContext, gw: GatewayUnderTest, method: string, params: Record<string, unknown>): () => Promise<LoadResult> {
  return () =>
    runWsLoad({
      url: gw.wsUrl(),
      clients: CLIENTS,
      inFlight: IN_FLIGHT,
      ...roundTiming(ctx),
      frame: requestFrame(method, params),
      prepare: (socket) => connectSocket(socket).then(() => undefined),
      accept: (answer) => answer.ok === true,
    });
}

/**
 * The cost of trace export on the WS RPC path: the ws-rpc cases through three embedded gateways,
 * one exporting every request's spans (sampleRatio 1) to a local collector that discards them,
 * one exporting 1% of them, one without `ops.tracing`, measured in turn round after round.
 */
async function measure(ctx: BenchContext): Promise<BenchResult[]> {
  const collector = await discardingCollector();
  const off = await startBenchGateway("embedded");
  const on = await startBenchGateway("embedded", { extraConfig: { ops: { tracing: { otlpEndpoint: collector.url } } } });
  const sampled = await startBenchGateway("embedded", {
    extraConfig: { ops: { tracing: { otlpEndpoint: collector.url, sampleRatio: 0.01 } } },
  });
  try {
    const steps: Record<string, () => Promise<LoadResult>> = {};
    for (const c of CASES) {
      await seed(off, c);
      await seed(on, c);
      await seed(sampled, c);
      steps[`${c.method} off`] = load(ctx, off, c.method, c.params);
      steps[`${c.method} on`] = load(ctx, on, c.method, c.params);
      steps[`${c.method} 1%`] = load(ctx, sampled, c.method, c.params);
    }
    const measured = await interleaved(ctx, steps);
    const results: BenchResult[] = [];
    for (const c of CASES) {
      const without = measured[`${c.method} off`]!;
      const traced = measured[`${c.method} on`]!;
      const onePercent = measured[`${c.method} 1%`]!;
      ctx.log(`  ${c.method}: off ${without.rps} req/s, on ${traced.rps}, 1% ${onePercent.rps} (p50 ${without.p50Ms} / ${traced.p50Ms} / ${onePercent.p50Ms} ms)`);
      const bench = `tracing ${c.method} (embedded)`;
      if (traced.ok === 0 || without.ok === 0 || onePercent.ok === 0) {
        results.push({ bench, status: "failed", reason: `every request failed (on ${traced.errors}, 1% ${onePercent.errors}, off ${without.errors})` });
        continue;
      }
      const label = `${c.method} embedded, tracing on vs off`;
      results.push({
        bench,
        status: "ok",
        figures: [
          info(`${label} throughput`, "req/s", traced.rps, without.rps),
          info(`${label} p50 latency`, "ms", traced.p50Ms, without.p50Ms),
          info(`${label} p99 latency`, "ms", traced.p99Ms, without.p99Ms),
          info(`${c.method} embedded, 1% sampled vs off throughput`, "req/s", onePercent.rps, without.rps),
          info(`${c.method} embedded, 1% sampled vs off p50 latency`, "ms", onePercent.p50Ms, without.p50Ms),
        ],
        details: { on: traced, onePercent, off: without, collectorExports: collector.exports(), rounds: ctx.args.rounds },
      });
    }
    return results;
  } finally {
    await sampled.stop();
    await on.stop();
    await off.stop();
    await collector.close();
  }
}

export const tracingSuite: Suite = { name: "tracing", run: measure };
