import type { Metrics } from "@gw/runtime";
import type { RunQueue } from "@gw/runs";
import type { RunObserver } from "./run-executor.js";

/**
 * A runner's run metrics: runs in hand, runs waiting in the queue (the whole queue's depth, the
 * same on every runner; KEDA reads it from NATS directly), and finished runs by outcome with
 * their duration.
 */
export function runMetrics(
  metrics: Metrics,
  deps: { active: () => number; admitted: () => number; queue: RunQueue },
): RunObserver {
  metrics.gauge({
    name: "gw_runs_active",
    help: "Runs this runner is executing now.",
    collect() {
      this.set(deps.active());
    },
  });
  metrics.gauge({
    name: "gw_runs_admitted",
    help: "Runs this runner takes at once now: runner.maxConcurrentRuns, or fewer while its event loop lags (admission control).",
    collect() {
      this.set(deps.admitted());
    },
  });
  metrics.gauge({
    name: "gw_runs_queued",
    help: "Runs waiting in the run queue for a runner with a free slot.",
    async collect() {
      // A scrape while NATS is away reports nothing rather than a made-up zero.
      const depth = await deps.queue.depth().catch(() => undefined);
      if (depth !== undefined) this.set(depth);
      else this.reset();
    },
  });
  const finished = metrics.counter({
    name: "gw_runs_finished_total",
    help: "Runs this runner finished, by outcome (ok or the error code).",
    labelNames: ["outcome"] as const,
  });
  const duration = metrics.histogram({
    name: "gw_run_duration_seconds",
    help: "Time from a run's start on this runner to its terminal event, by outcome.",
    labelNames: ["outcome"] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
  });
  return {
    finished({ outcome, durationMs }) {
      finished.inc({ outcome });
      duration.observe({ outcome }, durationMs / 1000);
    },
  };
}
