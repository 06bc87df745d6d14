import { monitorEventLoopDelay } from "node:perf_hooks";
import { Gauge } from "prom-client";
import type { Metrics } from "./metrics.js";

const METRIC_NAME = "gw_event_loop_delay_seconds";

export interface EventLoopMonitor {
  stop(): void;
}

/**
 * Reports event-loop delay percentiles since the previous scrape as
 * gw_event_loop_delay_seconds{quantile="0.5"|"0.99"|"1"}: a blocked loop delays every socket.
 */
export function startEventLoopMonitor(
  metrics: Metrics,
  opts: { resolutionMs?: number } = {},
): EventLoopMonitor {
  const resolutionMs = opts.resolutionMs ?? 20;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  // Node records each timer interval whole (an idle loop reads `resolution`), so the delay is
  // what exceeds the interval.
  const intervalNs = resolutionMs * 1e6;
  histogram.enable();
  new Gauge({
    name: METRIC_NAME,
    help: "Event-loop delay since the previous scrape, by quantile.",
    labelNames: ["quantile"],
    registers: [metrics.registry],
    collect() {
      // Before the first sample the histogram reports NaN/huge sentinels; report 0 then.
      const seconds = (ns: number) =>
        histogram.count > 0 && Number.isFinite(ns) ? Math.max(0, ns - intervalNs) / 1e9 : 0;
      this.set({ quantile: "0.5" }, seconds(histogram.percentile(50)));
      this.set({ quantile: "0.99" }, seconds(histogram.percentile(99)));
      this.set({ quantile: "1" }, seconds(histogram.max));
      histogram.reset();
    },
  });
  return {
    stop() {
      histogram.disable();
      metrics.registry.removeSingleMetric(METRIC_NAME);
    },
  };
}
