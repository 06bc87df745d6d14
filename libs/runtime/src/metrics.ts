import { Counter, collectDefaultMetrics, Gauge, type MetricValueWithName, Registry } from "prom-client";

export interface Metrics {
  service: string;
  /** This service's own registry: several services in one process must not share the global one. */
  registry: Registry;
  /** Requests handled, by method and outcome ("ok" or an error code). */
  requests: Counter<"method" | "outcome">;
  /** Handling time of a request, by method. */
  requestDuration: RequestDurations;
  /** Requests being handled now, by method (kept by `meter`, read when scraped). */
  inFlight: Gauge<"method">;
  /** Per-request accounting for the three metrics above. */
  meter: RequestMeter;
}

export interface MetricsOptions {
  service: string;
  /** Node process metrics (CPU, memory, GC, handles); on unless false. */
  collectDefault?: boolean;
}

/** An open request: its method label and when it started. */
export interface MeteredRequest {
  method: string;
  startedAt: number;
}

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
  readonly help = "Time to handle a request, by method.";
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly methods = new Map<string, MethodDurations>();

  observe(method: string, seconds: number): void {
    let durations = this.methods.get(method);
    if (durations === undefined) {
      durations = { counts: new Array<number>(DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      this.methods.set(method, durations);
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
    for (const [method, { counts, sum, count }] of this.methods) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, method }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: "+Inf", method }, value: count });
      values.push({ metricName: `${this.name}_sum`, labels: { method }, value: sum });
      values.push({ metricName: `${this.name}_count`, labels: { method }, value: count });
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
  private readonly open = new Map<string, number>();
  private readonly finished = new Map<string, Map<string, number>>();
  private readonly reported = new Map<string, Map<string, number>>();
  constructor(private readonly durations: RequestDurations) {}

  begin(method: string): MeteredRequest {
    this.open.set(method, (this.open.get(method) ?? 0) + 1);
    return { method, startedAt: performance.now() };
  }

  end(request: MeteredRequest, outcome: string): void {
    const { method } = request;
    this.open.set(method, (this.open.get(method) ?? 1) - 1);
    let outcomes = this.finished.get(method);
    if (outcomes === undefined) this.finished.set(method, (outcomes = new Map()));
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    this.durations.observe(method, (performance.now() - request.startedAt) / 1000);
  }

  /** Writes the open counts into the gauge (at scrape time). */
  reportOpen(gauge: Gauge<"method">): void {
    for (const [method, count] of this.open) gauge.set({ method }, count);
  }

  /** Adds what finished since the last scrape to the counter. */
  reportFinished(counter: Counter<"method" | "outcome">): void {
    for (const [method, outcomes] of this.finished) {
      let seen = this.reported.get(method);
      if (seen === undefined) this.reported.set(method, (seen = new Map()));
      for (const [outcome, count] of outcomes) {
        const delta = count - (seen.get(outcome) ?? 0);
        if (delta > 0) counter.inc({ method, outcome }, delta);
        seen.set(outcome, count);
      }
    }
  }
}

export function createMetrics(opts: MetricsOptions): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: opts.service });
  if (opts.collectDefault !== false) collectDefaultMetrics({ register: registry });
  const requestDuration = new RequestDurations();
  registry.registerMetric(requestDuration as never);
  const meter = new RequestMeter(requestDuration);
  return {
    service: opts.service,
    registry,
    requests: new Counter({
      name: "gw_requests_total",
      help: "Requests handled, by method and outcome.",
      labelNames: ["method", "outcome"],
      registers: [registry],
      collect() {
        meter.reportFinished(this);
      },
    }),
    requestDuration,
    inFlight: new Gauge({
      name: "gw_requests_in_flight",
      help: "Requests being handled now, by method.",
      labelNames: ["method"],
      registers: [registry],
      collect() {
        meter.reportOpen(this);
      },
    }),
    meter,
  };
}
