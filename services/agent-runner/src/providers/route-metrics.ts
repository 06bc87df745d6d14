import type { Metrics } from "@gw/runtime";
import type { RouteMetrics } from "./model-router.js";

/** Model calls and cooldowns by provider and key id (a hash, never the key). */
export function routeMetrics(metrics: Metrics): RouteMetrics {
  const calls = metrics.counter({
    name: "gw_model_requests_total",
    help: "Model calls by provider, key id and outcome (ok, rate_limit, server, timeout, fatal, aborted).",
    labelNames: ["provider", "key", "outcome"] as const,
  });
  const cooldowns = metrics.counter({
    name: "gw_model_cooldowns_total",
    help: "Cooldowns started by provider and key id (key \"*\": the whole provider).",
    labelNames: ["provider", "key"] as const,
  });
  return {
    attempt: (provider, key, outcome) => calls.inc({ provider, key, outcome }),
    cooled: (provider, key) => cooldowns.inc({ provider, key }),
  };
}
