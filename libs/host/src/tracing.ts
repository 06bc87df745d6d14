import type { GatewayConfig } from "@gw/config";
import type { Logger, Metrics } from "@gw/runtime";

/**
 * Starts span export when `ops.tracing` is set (otlp-export.ts). Returns the function that
 * flushes what is queued and stops (the shutdown's), or undefined when tracing is off. The
 * OpenTelemetry SDK (about 15 MiB resident) is imported only then.
 */
export async function startTracing(deps: {
  config: GatewayConfig;
  logger: Logger;
  metrics: Metrics;
  version: string;
}): Promise<(() => Promise<void>) | undefined> {
  const tracing = deps.config.ops.tracing;
  if (tracing === undefined) return undefined;
  const { startOtlpExport } = await import("./otlp-export.js");
  return startOtlpExport(deps, tracing);
}
