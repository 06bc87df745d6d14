import { afterEach, describe, expect, it } from "vitest";
import { createMetrics, type MetricsServer, startMetricsServer } from "./index.js";
import { promtoolCheck } from "@gw/testing";

describe("metrics", () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("serves this service's registry at GET /metrics with the service label", async () => {
    const metrics = createMetrics({ service: "edge", collectDefault: false });
    const other = createMetrics({ service: "runner", collectDefault: false });
    metrics.requests.inc({ surface: "ws", method: "agent", outcome: "ok" }, 3);
    other.requests.inc({ surface: "ws", method: "agent", outcome: "ok" });
    server = await startMetricsServer({ port: 0, host: "127.0.0.1", registry: metrics.registry });

    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const body = await res.text();
    expect(body).toContain('gw_requests_total{surface="ws",method="agent",outcome="ok",service="edge"} 3');
    expect(body).not.toContain('service="runner"');

    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${server.port}/metrics`, { method: "POST" })).status).toBe(404);
  });

  it("reports metered requests when scraped: counts once, in-flight now, and durations", async () => {
    const metrics = createMetrics({ service: "edge", collectDefault: false });
    const first = metrics.meter.begin("ws", "agents.list");
    const second = metrics.meter.begin("ws", "agents.list");
    const third = metrics.meter.begin("bus", "sessions.preview");
    metrics.meter.end(first, "ok");
    metrics.meter.end(third, "NOT_FOUND");
    const line = (body: string, name: string) => body.split("\n").find((l) => l.startsWith(name));
    let body = await metrics.registry.metrics();
    expect(line(body, 'gw_requests_total{surface="ws",method="agents.list",outcome="ok"')).toMatch(/ 1$/);
    expect(line(body, 'gw_requests_total{surface="bus",method="sessions.preview",outcome="NOT_FOUND"')).toMatch(/ 1$/);
    expect(line(body, 'gw_requests_in_flight{surface="ws",method="agents.list"')).toMatch(/ 1$/);
    expect(line(body, 'gw_requests_in_flight{surface="bus",method="sessions.preview"')).toMatch(/ 0$/);
    expect(line(body, 'gw_request_duration_seconds_count{surface="ws",method="agents.list",service="edge"')).toMatch(/ 1$/);

    metrics.meter.end(second, "ok");
    body = await metrics.registry.metrics();
    expect(line(body, 'gw_requests_total{surface="ws",method="agents.list",outcome="ok"')).toMatch(/ 2$/);
    expect(line(body, 'gw_requests_in_flight{surface="ws",method="agents.list"')).toMatch(/ 0$/);
    expect(line(body, 'gw_request_duration_seconds_count{surface="ws",method="agents.list",service="edge"')).toMatch(/ 2$/);
    // A scrape with nothing new changes nothing.
    expect(line(await metrics.registry.metrics(), 'gw_requests_total{surface="ws",method="agents.list",outcome="ok"')).toMatch(/ 2$/);
  });

  it("puts request durations in cumulative Prometheus buckets, bounds inclusive", async () => {
    const metrics = createMetrics({ service: "edge", collectDefault: false });
    for (const seconds of [0.0005, 0.001, 0.007, 40]) metrics.requestDuration.observe("http", "POST /v1/chat/completions", seconds);
    const body = await metrics.registry.metrics();
    const bucket = (le: string) =>
      Number(body.match(new RegExp(`gw_request_duration_seconds_bucket\\{le="${le.replace("+", "\\+")}",surface="http",method="POST /v1/chat/completions",service="edge"\\} (\\d+)`))?.[1]);
    expect([bucket("0.001"), bucket("0.005"), bucket("0.01"), bucket("30"), bucket("+Inf")]).toEqual([2, 2, 3, 3, 4]);
    expect(body).toMatch(/gw_request_duration_seconds_sum\{surface="http",method="POST \/v1\/chat\/completions",service="edge"\} 40\.008/);
    expect(body).toContain('gw_request_duration_seconds_count{surface="http",method="POST /v1/chat/completions",service="edge"} 4');
    expect(body).toContain("# TYPE gw_request_duration_seconds histogram");
  });

  it("includes Node process metrics unless turned off", async () => {
    const metrics = createMetrics({ service: "edge" });
    const body = await metrics.registry.metrics();
    expect(body).toContain("process_cpu_user_seconds_total");
    expect(body).toContain("nodejs_active_handles{");
    expect(body).not.toContain("nodejs_active_handles_total");
  });

  it("reports the event-loop lag through Node's own metrics, reset at every scrape", async () => {
    const metrics = createMetrics({ service: "edge" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const until = Date.now() + 80;
    while (Date.now() < until) {
      // busy-wait: a blocked loop
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    const max = (body: string) => Number(/nodejs_eventloop_lag_max_seconds\{[^}]*\} ([\d.e-]+)/.exec(body)?.[1]);
    expect(max(await metrics.registry.metrics())).toBeGreaterThan(0.05);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(max(await metrics.registry.metrics())).toBeLessThan(0.05);
  });

  it("makes counters, gauges, histograms and tallies once per name, all in this registry", async () => {
    const metrics = createMetrics({ service: "edge", collectDefault: false });
    const spec = { name: "gw_test_total", help: "Test.", labelNames: ["kind"] as const };
    metrics.counter(spec).inc({ kind: "a" });
    metrics.counter(spec).inc({ kind: "a" });
    const tally = metrics.tally({ name: "gw_tally_total", help: "Tally." });
    tally.add();
    metrics.tally({ name: "gw_tally_total", help: "Tally." }).add(2);
    metrics.histogram({ name: "gw_test_seconds", help: "Test.", labelNames: ["kind"] }).observe({ kind: "b" }, 0.2);
    metrics.gauge({ name: "gw_test_open", help: "Open.", collect() { this.set(7); } });
    let body = await metrics.registry.metrics();
    expect(body).toContain('gw_test_total{kind="a",service="edge"} 2');
    expect(body).toContain('gw_tally_total{service="edge"} 3');
    expect(body).toContain('gw_test_seconds_count{service="edge",kind="b"} 1');
    expect(body).toContain('gw_test_open{service="edge"} 7');
    tally.add();
    body = await metrics.registry.metrics();
    expect(body).toContain('gw_tally_total{service="edge"} 4');
  });

  it("passes promtool check metrics, with every kind of metric it makes", async (ctx) => {
    const metrics = createMetrics({ service: "edge" });
    metrics.meter.end(metrics.meter.begin("http", "GET /health"), "200");
    metrics.meter.begin("ws", "agent");
    metrics.counter({ name: "gw_test_total", help: "Test.", labelNames: ["kind"] }).inc({ kind: "a" });
    metrics.tally({ name: "gw_tally_total", help: "Tally." }).add();
    metrics.histogram({ name: "gw_test_seconds", help: "Test." }).observe(0.3);
    const result = await promtoolCheck(await metrics.registry.metrics());
    if (result === "missing") ctx.skip("promtool is not installed (Debian: apt-get install prometheus); CI installs it");
    expect(result).toEqual({ ok: true, output: "" });
  });
});
