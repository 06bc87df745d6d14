import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { beginSpan, runInTrace, startSpan, tracingEnabled } from "@gw/bus";
import { parseConfig } from "@gw/config";
import { createLogger, createMetrics, type Metrics } from "@gw/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { startTracing } from "./tracing.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A collector that takes requests and never answers them. */
async function hangingCollector(): Promise<string> {
  const server = createServer(() => undefined);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
}

async function dropped(metrics: Metrics): Promise<number> {
  const line = /^gw_trace_spans_dropped_total\{[^}]*\} (\d+)/m.exec(await metrics.registry.metrics());
  return Number(line?.[1] ?? 0);
}

const silent = createLogger({ service: "test", level: "silent" });

describe("startTracing", () => {
  it("does nothing without ops.tracing", async () => {
    const metrics = createMetrics({ service: "test" });
    expect(await startTracing({ config: parseConfig("{}", { env: {} }), logger: silent, metrics, version: "0" })).toBeUndefined();
    expect(tracingEnabled()).toBe(false);
  });

  it("keeps a bounded queue when the collector hangs: spans beyond it are counted as dropped, at once", async () => {
    const config = parseConfig(`{ ops: { tracing: { otlpEndpoint: "${await hangingCollector()}" } } }`, { env: {} });
    const metrics = createMetrics({ service: "test" });
    const stop = (await startTracing({ config, logger: silent, metrics, version: "0" }))!;
    try {
      expect(tracingEnabled()).toBe(true);
      runInTrace(startSpan(), () => {
        for (let i = 0; i < 5_000; i++) beginSpan("edge", "agent", "server", startSpan())?.end();
      });
      expect(await dropped(metrics)).toBe(5_000 - 4_096);
    } finally {
      await stop();
    }
    // Stopping gave up on the hanging collector after its bound (within the test timeout) and switched recording off.
    expect(tracingEnabled()).toBe(false);
  });
});
