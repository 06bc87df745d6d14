import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface Metrics {
  service: string;
  /** This service's own registry: several services in one process must not share the global one. */
  registry: Registry;
  /** Requests handled, by method and outcome ("ok" or an error code). */
  requests: Counter<"method" | "outcome">;
  /** Handling time of a request, by method. */
  requestDuration: Histogram<"method">;
  /** Requests being handled now, by method. */
  inFlight: Gauge<"method">;
}

export interface MetricsOptions {
  service: string;
  /** Node process metrics (CPU, memory, GC, handles); on unless false. */
  collectDefault?: boolean;
}

export function createMetrics(opts: MetricsOptions): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: opts.service });
  if (opts.collectDefault !== false) collectDefaultMetrics({ register: registry });
  return {
    service: opts.service,
    registry,
    requests: new Counter({
      name: "gw_requests_total",
      help: "Requests handled, by method and outcome.",
      labelNames: ["method", "outcome"],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: "gw_request_duration_seconds",
      help: "Time to handle a request, by method.",
      labelNames: ["method"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: "gw_requests_in_flight",
      help: "Requests being handled now, by method.",
      labelNames: ["method"],
      registers: [registry],
    }),
  };
}
