import { afterEach, describe, expect, it } from "vitest";
import { createMetrics, type MetricsServer, startEventLoopMonitor, startMetricsServer } from "./index.js";

describe("metrics", () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("serves this service's registry at GET /metrics with the service label", async () => {
    const metrics = createMetrics({ service: "edge", collectDefault: false });
    const other = createMetrics({ service: "runner", collectDefault: false });
    metrics.requests.inc({ method: "agent", outcome: "ok" }, 3);
    other.requests.inc({ method: "agent", outcome: "ok" });
    server = await startMetricsServer({ port: 0, host: "127.0.0.1", registry: metrics.registry });

    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const body = await res.text();
    expect(body).toContain('gw_requests_total{method="agent",outcome="ok",service="edge"} 3');
    expect(body).not.toContain('service="runner"');

    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${server.port}/metrics`, { method: "POST" })).status).toBe(404);
  });

  it("reports metered requests when scraped: counts once, in-flight now, and durations", async () => {
    const metrics = createMetrics({ service: "edge", collectDefault: false });
    const first = metrics.meter.begin("agents.list");
    const second = metrics.meter.begin("agents.list");
    const third = metrics.meter.begin("sessions.preview");
    metrics.meter.end(first, "ok");
    metrics.meter.end(third, "NOT_FOUND");
    const line = (body: string, name: string) => body.split("\n").find((l) => l.startsWith(name));
    let body = await metrics.registry.metrics();
    expect(line(body, 'gw_requests_total{method="agents.list",outcome="ok"')).toMatch(/ 1$/);
    expect(line(body, 'gw_requests_total{method="sessions.preview",outcome="NOT_FOUND"')).toMatch(/ 1$/);
    expect(line(body, 'gw_requests_in_flight{method="agents.list"')).toMatch(/ 1$/);
    expect(line(body, 'gw_requests_in_flight{method="sessions.preview"')).toMatch(/ 0$/);
    expect(line(body, 'gw_request_duration_seconds_count{method="agents.list",service="edge"')).toMatch(/ 1$/);

    metrics.meter.end(second, "ok");
    body = await metrics.registry.metrics();
    expect(line(body, 'gw_requests_total{method="agents.list",outcome="ok"')).toMatch(/ 2$/);
    expect(line(body, 'gw_requests_in_flight{method="agents.list"')).toMatch(/ 0$/);
    expect(line(body, 'gw_request_duration_seconds_count{method="agents.list",service="edge"')).toMatch(/ 2$/);
    // A scrape with nothing new changes nothing.
    expect(line(await metrics.registry.metrics(), 'gw_requests_total{method="agents.list",outcome="ok"')).toMatch(/ 2$/);
  });

  it("puts request durations in cumulative Prometheus buckets, bounds inclusive", async () => {
    const metrics = createMetrics({ service: "edge", collectDefault: false });
    for (const seconds of [0.0005, 0.001, 0.007, 40]) metrics.requestDuration.observe("agent", seconds);
    const body = await metrics.registry.metrics();
    const bucket = (le: string) =>
      Number(body.match(new RegExp(`gw_request_duration_seconds_bucket\\{le="${le.replace("+", "\\+")}",method="agent",service="edge"\\} (\\d+)`))?.[1]);
    expect([bucket("0.001"), bucket("0.005"), bucket("0.01"), bucket("30"), bucket("+Inf")]).toEqual([2, 2, 3, 3, 4]);
    expect(body).toMatch(/gw_request_duration_seconds_sum\{method="agent",service="edge"\} 40\.008/);
    expect(body).toContain('gw_request_duration_seconds_count{method="agent",service="edge"} 4');
    expect(body).toContain("# TYPE gw_request_duration_seconds histogram");
  });

  it("includes Node process metrics unless turned off", async () => {
    const metrics = createMetrics({ service: "edge" });
    expect(await metrics.registry.metrics()).toContain("process_cpu_user_seconds_total");
  });

  it("reports event-loop delay quantiles", async () => {
    const metrics = createMetrics({ service: "edge", collectDefault: false });
    const monitor = startEventLoopMonitor(metrics, { resolutionMs: 10 });
    // Let the monitor's timer start, then block the loop twice so it has a delay to see.
    for (let i = 0; i < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      const until = Date.now() + 80;
      while (Date.now() < until) {
        // busy-wait
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    const body = await metrics.registry.metrics();
    monitor.stop();
    const quantile = (q: string) =>
      body.match(new RegExp(`gw_event_loop_delay_seconds\\{quantile="${q}",service="edge"\\} ([\\d.e-]+)`));
    expect(quantile("0.99")).not.toBeNull();
    expect(Number(quantile("0.99")![1])).toBeGreaterThan(0);
    expect(Number(quantile("1")![1])).toBeGreaterThan(0.03);
    expect(await metrics.registry.metrics()).not.toContain("gw_event_loop_delay_seconds");
  });
});
