import { promtoolCheck } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectRun } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { sample, scrape } from "./fixtures/metrics.js";
import { WsClient } from "./fixtures/ws-client.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe.each(MODES)("metrics, request ids and access logs (%s)", (mode) => {
  let gw: GatewayUnderTest;
  /** The request id the edge gave the HTTP call that continued the client's trace. */
  let tracedRequestId: string;
  beforeAll(async () => {
    gw = await startGateway(mode, {
      health: true,
      ...(mode === "distributed" ? { deliveryReplicas: 1 } : {}),
      extraConfig: { ops: { logLevel: "debug" } },
    });
    // Traffic that touches every service: a run (runner, sessions), channels.status (delivery),
    // an HTTP call with the client's trace, and a failed authentication.
    const client = await WsClient.open(gw.wsUrl());
    await client.connect(TOKEN);
    const runId = "observed-run-1";
    await client.request("agent", { message: "hello metrics", sessionKey: "user:metrics", runId });
    await collectRun(client, runId);
    await client.request("channels.status", {});
    await client.request("sessions.list", {});
    await client.request("agents.list", {});
    client.close();
    await fetch(`${gw.httpUrl()}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const invoked = await fetch(`${gw.httpUrl()}/api/tools/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", traceparent: TRACEPARENT },
      body: JSON.stringify({ tool: "time.now" }),
    });
    tracedRequestId = invoked.headers.get("x-request-id") ?? "";
    await fetch(`${gw.httpUrl()}/v1/models`, { headers: { authorization: "Bearer wrong" } });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("serves /metrics from every process, each passing promtool check metrics", async (ctx) => {
    expect(gw.ops.length).toBe(mode === "embedded" ? 1 : 4);
    const results = await Promise.all(
      gw.ops.map(async ({ name, metricsPort }) => ({ name, result: await promtoolCheck(await scrape(metricsPort)) })),
    );
    if (results.some(({ result }) => result === "missing"))
      ctx.skip("promtool is not installed (Debian: apt-get install prometheus); .ci/run installs it");
    for (const { name, result } of results) expect(result, name).toEqual({ ok: true, output: "" });
  });

  it("counts requests by surface in every service, and what each service does", async () => {
    const text = Object.fromEntries(await Promise.all(gw.ops.map(async (o) => [o.name, await scrape(o.metricsPort)] as const)));
    const edge = text[mode === "embedded" ? "gateway" : "edge-0"]!;
    const runner = text[mode === "embedded" ? "gateway" : "agent-runner"]!;
    const sessions = text[mode === "embedded" ? "gateway" : "sessions-0"]!;
    const delivery = text[mode === "embedded" ? "gateway" : "delivery-0"]!;
    expect(sample(edge, "gw_requests_total", { surface: "ws", method: "agent", outcome: "ok" })).toBe(1);
    expect(sample(edge, "gw_requests_total", { surface: "http", method: "GET /v1/models", outcome: "200" })).toBe(1);
    expect(sample(edge, "gw_requests_total", { surface: "http", method: "GET /v1/models", outcome: "401" })).toBe(1);
    expect(sample(edge, "gw_request_duration_seconds_count", { surface: "http", method: "GET /v1/models" })).toBe(2);
    expect(sample(edge, "gw_ws_connections", { role: "control" })).toBe(0);
    expect(sample(edge, "gw_events_delivered_total")).toBeGreaterThanOrEqual(3);
    expect(sample(edge, "gw_auth_failures_total")).toBe(1);
    expect(sample(edge, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThan(0);
    expect(sample(runner, "gw_requests_total", { surface: "bus", method: "runner.agents.list", outcome: "ok" })).toBe(1);
    expect(sample(runner, "gw_runs_finished_total", { outcome: "ok" })).toBe(1);
    expect(sample(runner, "gw_runs_active")).toBe(0);
    // runner.maxConcurrentRuns (256 by default), or the admission limit below it (at least 32).
    expect(sample(runner, "gw_runs_admitted")).toBeGreaterThanOrEqual(32);
    expect(sample(runner, "gw_runs_admitted")).toBeLessThanOrEqual(256);
    expect(sample(runner, "gw_runs_queued")).toBe(0);
    expect(sample(runner, "gw_model_call_duration_seconds_count", { provider: "builtin", outcome: "ok" })).toBe(1);
    expect(sample(sessions, "gw_requests_total", { surface: "bus", method: "sessions.list", outcome: "ok" })).toBe(1);
    expect(sample(delivery, "gw_requests_total", { surface: "bus", method: "delivery.channels.status", outcome: "ok" })).toBe(1);
  });

  it("returns a request id of its own as x-request-id, a new one per request even when the client continues one trace", async () => {
    const ids = [];
    for (const headers of [{ traceparent: TRACEPARENT }, { traceparent: TRACEPARENT }, {}] as Array<Record<string, string>>) {
      const id = (await fetch(`${gw.httpUrl()}/health`, { headers })).headers.get("x-request-id");
      expect(id).toMatch(/^req_[0-9a-f]{32}$/);
      expect(id).not.toBe(`req_${TRACE_ID}`);
      ids.push(id);
    }
    expect(new Set([...ids, tracedRequestId]).size).toBe(4);
  });

  it("logs each request with its id, in the edge and in the service the bus carried it to", async () => {
    const parsed = () =>
      gw
        .fullLogs()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    // Log lines reach stdout in batches (up to 50 ms late), each process its own: wait for all four.
    const present = () => {
      const all = parsed();
      return (
        all.some((l) => l.msg === "http request" && l.reqId === tracedRequestId) &&
        all.some((l) => l.msg === "bus request" && l.reqId === tracedRequestId) &&
        all.some((l) => l.msg === "ws request" && l.method === "agent") &&
        all.some((l) => l.msg === "run finished" && l.runId === "observed-run-1")
      );
    };
    await expect.poll(present, { timeout: 5_000 }).toBe(true);
    const lines = parsed();
    // The request id is the edge's, in every process; the client's trace id is beside it, to join its spans.
    const access = lines.find((l) => l.msg === "http request" && l.reqId === tracedRequestId);
    expect(access).toMatchObject({ method: "POST", route: "/api/tools/invoke", status: 200, traceId: TRACE_ID });
    const served = lines.find((l) => l.msg === "bus request" && l.reqId === tracedRequestId && l.method === "runner.tools.invoke");
    expect(served).toMatchObject({ traceId: TRACE_ID });
    expect(lines.some((l) => l.reqId === `req_${TRACE_ID}`)).toBe(false);
    expect(lines.find((l) => l.msg === "ws request" && l.method === "agent" && l.outcome === "ok")).toBeDefined();
    // The run's own line: who ran what, how long, how it ended, under the agent request's id.
    const agentRequest = lines.find((l) => l.msg === "ws request" && l.method === "agent");
    const run = lines.find((l) => l.msg === "run finished" && l.runId === "observed-run-1");
    expect(run).toMatchObject({ agentId: "main", model: "builtin/echo", outcome: "ok", reqId: agentRequest?.reqId });
    expect(typeof run?.runnerId).toBe("string");
    expect(typeof run?.durationMs).toBe("number");
  });
});
