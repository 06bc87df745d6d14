import { Counter, collectDefaultMetrics, Gauge, Histogram, type MetricValueWithName, Registry } from "prom-client";

/** Where a request came in: a WebSocket frame, an HTTP request, or a bus RPC a service handles. */
export type Surface = "ws" | "http" | "bus";

export interface Metrics {
  service: string;
  /** This service's own registry: several services in one process must not share the global one. */
  registry: Registry;
  /** Requests handled, by surface, method and outcome ("ok", an error code, or an HTTP status). */
  requests: Counter<"surface" | "method" | "outcome">;
  /** Handling time of a request, by surface and method. */
  requestDuration: RequestDurations;
  /** Requests being handled now, by surface and method (kept by `meter`, read when scraped). */
  inFlight: Gauge<"surface" | "method">;
  /** Per-request accounting for the three metrics above. */
  meter: RequestMeter;
  /** A counter in this registry (the same one when asked twice for one name). */
  counter<L extends string>(spec: MetricSpec<L>): Counter<L>;
  /** A gauge in this registry; `collect` runs at scrape time (the same one when asked twice for one name). */
  gauge<L extends string>(spec: MetricSpec<L> & { collect?: (this: Gauge<L>) => void | Promise<void> }): Gauge<L>;
  /** A histogram in this registry, in seconds unless `buckets` say otherwise. */
  histogram<L extends string>(spec: MetricSpec<L> & { buckets?: number[] }): Histogram<L>;
  /** A label-less counter for hot paths: a plain number handed to prom-client at scrape time. */
  tally(spec: { name: string; help: string }): Tally;
}

export interface MetricSpec<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

/** A counter incremented by plain addition (see `Metrics.tally`). */
export interface Tally {
  add(n?: number): void;
}

export interface MetricsOptions {
  service: string;
  /** Node process metrics (CPU, memory, GC, handles, event-loop lag); on unless false. */
  collectDefault?: boolean;
}

/** An open request: its labels and when it started. */
export interface MeteredRequest {
  surface: Surface;
  method: string;
  startedAt: number;
}

const SUMS_NAMED_LIKE_COUNTERS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface MethodDurations {
  /** Observations per bucket (not cumulative); the last slot is beyond the largest bound. */
  counts: number[];
  sum: number;
  count: number;
}

/**
 * `gw_request_duration_seconds`, a Prometheus histogram by method, kept in plain arrays and
 * turned into prom-client's form only when scraped (a prom-client Histogram validates and hashes
 * its labels on every observation).
 */
export class RequestDurations {
  readonly name = "gw_request_duration_seconds";
  readonly help = "Time to handle a request, by surface and method.";
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly methods = new Map<Surface, Map<string, MethodDurations>>();

  observe(surface: Surface, method: string, seconds: number): void {
    let bySurface = this.methods.get(surface);
    if (bySurface === undefined) this.methods.set(surface, (bySurface = new Map()));
    let durations = bySurface.get(method);
    if (durations === undefined) {
      durations = { counts: new Array<number>(DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      bySurface.set(method, durations);
    }
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    durations.counts[bucket]! += 1;
    durations.sum += seconds;
    durations.count += 1;
  }

  /** What prom-client's registry formats for a scrape. */
  get(): { name: string; help: string; type: string; aggregator: string; values: Array<MetricValueWithName<string>> } {
    const values: Array<MetricValueWithName<string>> = [];
    for (const [surface, bySurface] of this.methods) {
      for (const [method, { counts, sum, count }] of bySurface) {
        let cumulative = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += counts[i]!;
          values.push({ metricName: `${this.name}_bucket`, labels: { le, surface, method }, value: cumulative });
        });
        values.push({ metricName: `${this.name}_bucket`, labels: { le: "+Inf", surface, method }, value: count });
        values.push({ metricName: `${this.name}_sum`, labels: { surface, method }, value: sum });
        values.push({ metricName: `${this.name}_count`, labels: { surface, method }, value: count });
      }
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.methods.clear();
  }
}

/**
 * Counts requests in plain maps and hands the counts to prom-client when /metrics is scraped:
 * prom-client hashes the label set on every update, which at tens of thousands of requests a
 * second cost more than some of the requests themselves.
 */
export class RequestMeter {
  /** Per surface, per method: open requests, and finished ones by outcome. */
  private readonly open = new Map<Surface, Map<string, number>>();
  private readonly finished = new Map<Surface, Map<string, Map<string, number>>>();
  private readonly reported = new Map<string, number>();
  constructor(private readonly durations: RequestDurations) {}

  begin(surface: Surface, method: string): MeteredRequest {
    const open = submap(this.open, surface);
    open.set(method, (open.get(method) ?? 0) + 1);
    return { surface, method, startedAt: performance.now() };
  }

  end(request: MeteredRequest, outcome: string): void {
    const { surface, method } = request;
    const open = submap(this.open, surface);
    open.set(method, (open.get(method) ?? 1) - 1);
    const outcomes = submap(submap(this.finished, surface), method);
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    this.durations.observe(surface, method, (performance.now() - request.startedAt) / 1000);
  }

  /** Writes the open counts into the gauge (at scrape time). */
  reportOpen(gauge: Gauge<"surface" | "method">): void {
    for (const [surface, methods] of this.open) {
      for (const [method, count] of methods) gauge.set({ surface, method }, count);
    }
  }

  /** Adds what finished since the last scrape to the counter. */
  reportFinished(counter: Counter<"surface" | "method" | "outcome">): void {
    for (const [surface, methods] of this.finished) {
      for (const [method, outcomes] of methods) {
        for (const [outcome, count] of outcomes) {
          const key = `${surface}\u0000${method}\u0000${outcome}`;
          const delta = count - (this.reported.get(key) ?? 0);
          if (delta > 0) counter.inc({ surface, method, outcome }, delta);
          this.reported.set(key, count);
        }
      }
    }
  }
}

function submap<K, K2, V>(outer: Map<K, Map<K2, V>>, key: K): Map<K2, V> {
  let inner = outer.get(key);
  if (inner === undefined) outer.set(key, (inner = new Map()));
  return inner;
}

export function createMetrics(opts: MetricsOptions): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: opts.service });
  // Node's own metrics include the event-loop lag (nodejs_eventloop_lag_p99_seconds and the
  // rest, reset at every scrape), sampled every 10 ms.
  if (opts.collectDefault !== false) {
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
    // Gauges named like counters fail `promtool check metrics`; each is the sum of the
    // by-type gauge of the same name without `_total`, which stays.
    for (const name of SUMS_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  }
  const requestDuration = new RequestDurations();
  registry.registerMetric(requestDuration as never);
  const meter = new RequestMeter(requestDuration);
  const tallies = new Map<string, Tally>();
  const existing = <M>(name: string): M | undefined => registry.getSingleMetric(name) as M | undefined;
  return {
    service: opts.service,
    registry,
    requests: new Counter({
      name: "gw_requests_total",
      help: "Requests handled, by surface (ws, http, bus), method and outcome.",
      labelNames: ["surface", "method", "outcome"],
      registers: [registry],
      collect() {
        meter.reportFinished(this);
      },
    }),
    requestDuration,
    inFlight: new Gauge({
      name: "gw_requests_in_flight",
      help: "Requests being handled now, by surface and method.",
      labelNames: ["surface", "method"],
      registers: [registry],
      collect() {
        meter.reportOpen(this);
      },
    }),
    meter,
    counter: (spec) =>
      existing(spec.name) ?? new Counter({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] }),
    gauge: (spec) =>
      existing(spec.name) ?? new Gauge({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] }),
    histogram: (spec) =>
      existing(spec.name) ??
      new Histogram({ ...spec, labelNames: spec.labelNames ?? [], buckets: spec.buckets ?? DURATION_BUCKETS, registers: [registry] }),
    tally: (spec) => {
      let tally = tallies.get(spec.name);
      if (tally !== undefined) return tally;
      let total = 0;
      let reported = 0;
      new Counter({
        ...spec,
        registers: [registry],
        collect() {
          this.inc(total - reported);
          reported = total;
        },
      });
      tally = {
        add(n = 1) {
          total += n;
        },
      };
      tallies.set(spec.name, tally);
      return tally;
    },
  };
}
