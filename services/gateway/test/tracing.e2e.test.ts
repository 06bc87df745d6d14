import { type FakeModelServer, startFakeModelServer, waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletion as chat, RUN_AGENTS, runModels, runToEnd } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./fixtures/otlp-receiver.js";
import { WsClient } from "./fixtures/ws-client.js";

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;
const STATUS_ERROR = 2;

/** The spans of one trace once `ready` holds for them (export is batched: they come within a few seconds). */
function traceSpans(receiver: OtlpReceiver, traceId: string, ready: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  return waitFor(
    () => {
      const spans = receiver.spans.filter((span) => span.traceId === traceId);
      return ready(spans) ? spans : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 100, what: `the spans of trace ${traceId}` },
  );
}

/** A chat completion's spans have all arrived: each process exports its own, in its own time. */
const completionSpans = (spans: ReceivedSpan[]) =>
  ["POST /v1/chat/completions", "agent run", "chat echo"].every((name) => spans.some((span) => span.name === name));

const one = (spans: ReceivedSpan[], pred: (span: ReceivedSpan) => boolean, what: string): ReceivedSpan => {
  const found = spans.filter(pred);
  expect(found.length, what).toBe(1);
  return found[0]!;
};

/** One trace: a single root, and every other span's parent is a span of the same trace. */
function expectLinked(spans: ReceivedSpan[], rootParent?: string): void {
  const ids = new Set(spans.map((span) => span.spanId));
  expect(ids.size).toBe(spans.length);
  const roots = spans.filter((span) => span.parentSpanId === rootParent);
  expect(roots.map((span) => span.service)).toEqual(["gateway-edge"]);
  for (const span of spans) if (span !== roots[0]) expect(ids.has(span.parentSpanId ?? ""), `${span.service} ${span.name}`).toBe(true);
}

describe.each(MODES)("OpenTelemetry trace export (%s)", (mode) => {
  let receiver: OtlpReceiver;
  let fake: FakeModelServer;
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    fake = await startFakeModelServer();
    gw = await startGateway(mode, {
      health: true,
      ...(mode === "distributed" ? { deliveryReplicas: 1 } : {}),
      agents: RUN_AGENTS,
      models: runModels(fake),
      extraConfig: { ops: { tracing: { otlpEndpoint: receiver.url } } },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.close();
    await receiver?.close();
  });

  it("makes an agent run over WebSocket one trace across the edge, the runner and sessions", async () => {
    const runId = `traced-ws-${mode}`;
    await runToEnd(gw, runId, "hello traces", "oa");
    const run = await waitFor(() => receiver.spans.find((span) => span.attributes["gw.run.id"] === runId), {
      timeoutMs: 15_000,
      what: "the run's span",
    });
    const spans = await traceSpans(receiver, run.traceId, (all) =>
      ["gateway-edge", "gateway-sessions"].every((service) => all.some((span) => span.service === service)) &&
      all.some((span) => span.name === "chat gpt-test") &&
      all.some((span) => span.name === "sessions.append"),
    );
    expectLinked(spans);
    const edge = one(spans, (span) => span.service === "gateway-edge" && span.name === "agent", "the edge's agent span");
    expect(edge).toMatchObject({ kind: SERVER, attributes: { "rpc.method": "agent", "gw.outcome": "ok" } });
    expect(run).toMatchObject({
      service: "gateway-agent-runner",
      name: "agent run",
      kind: CONSUMER,
      parentSpanId: edge.spanId,
      attributes: { "gen_ai.agent.id": "oa", "gen_ai.request.model": "fake-openai/gpt-test", "gw.outcome": "ok" },
    });
    const model = one(spans, (span) => span.name === "chat gpt-test", "the model call");
    expect(model).toMatchObject({
      service: "gateway-agent-runner",
      kind: CLIENT,
      parentSpanId: run.spanId,
      attributes: { "gen_ai.provider.name": "fake-openai", "gen_ai.request.model": "gpt-test", "gen_ai.response.finish_reasons": "stop" },
    });
    expect(model.attributes["gen_ai.usage.output_tokens"]).toEqual(expect.any(Number));
    // The runner reads and writes the session: server spans of the sessions service under the run.
    const append = one(spans, (span) => span.name === "sessions.append", "the session write");
    expect(append).toMatchObject({ service: "gateway-sessions", kind: SERVER, parentSpanId: run.spanId });
  });

  it("links a WebSocket request served by the delivery service to the edge's span", async () => {
    const client = await WsClient.open(gw.wsUrl());
    try {
      await client.connect(TOKEN);
      expect((await client.request("channels.status", {})).ok).toBe(true);
    } finally {
      client.close();
    }
    const served = await waitFor(
      () => receiver.spans.find((span) => span.service === "gateway-delivery" && span.name === "delivery.channels.status"),
      { timeoutMs: 15_000, what: "the delivery service's span" },
    );
    const spans = await traceSpans(receiver, served.traceId, (all) => all.some((span) => span.service === "gateway-edge"));
    expectLinked(spans);
    const edge = one(spans, (span) => span.service === "gateway-edge", "the edge's span");
    expect(edge).toMatchObject({ name: "channels.status", attributes: { "gw.outcome": "ok" } });
    expect(served).toMatchObject({ kind: SERVER, parentSpanId: edge.spanId, attributes: { "rpc.service": "delivery", "rpc.method": "channels.status" } });
  });

  it("names the trace of POST /v1/chat/completions in x-request-id", async () => {
    const res = await chat(gw, "traced completion");
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id") ?? "";
    expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
    const spans = await traceSpans(receiver, requestId.slice(4), completionSpans);
    expectLinked(spans);
    const edge = one(spans, (span) => span.service === "gateway-edge", "the edge's span");
    expect(edge).toMatchObject({
      name: "POST /v1/chat/completions",
      kind: SERVER,
      attributes: { "http.request.method": "POST", "http.route": "/v1/chat/completions", "http.response.status_code": 200 },
    });
    const run = one(spans, (span) => span.name === "agent run", "the run");
    expect(run).toMatchObject({ parentSpanId: edge.spanId, attributes: { "gen_ai.agent.id": "main", "gw.outcome": "ok" } });
    expect(one(spans, (span) => span.name === "chat echo", "the model call")).toMatchObject({
      parentSpanId: run.spanId,
      attributes: { "gen_ai.provider.name": "builtin" },
    });
  });

  it("continues a client's traceparent under a request id of its own, and leaves unsampled traces unrecorded", async () => {
    const traceId = mode === "embedded" ? "0af7651916cd43dd8448eb211c80319c" : "1af7651916cd43dd8448eb211c80319c";
    const sampled = await chat(gw, "client trace", { traceparent: `00-${traceId}-b7ad6b7169203331-01` });
    // The request id is the gateway's (the client's trace id is the client's choice): the edge's
    // span names it, so a trace is found from the id an error answer quotes.
    const requestId = sampled.headers.get("x-request-id");
    expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(requestId).not.toBe(`req_${traceId}`);
    const spans = await traceSpans(receiver, traceId, completionSpans);
    expectLinked(spans, "b7ad6b7169203331");
    expect(one(spans, (span) => span.service === "gateway-edge", "the edge's span").attributes["gw.request.id"]).toBe(requestId);

    const unsampledId = traceId.replace(/^./, "2");
    const unsampled = await chat(gw, "unsampled trace", { traceparent: `00-${unsampledId}-b7ad6b7169203331-00` });
    expect(unsampled.status).toBe(200);
    // A later sampled request's spans arrive; by then the unsampled one's would have too.
    const later = await chat(gw, "after unsampled");
    await traceSpans(receiver, (later.headers.get("x-request-id") ?? "").slice(4), completionSpans);
    expect(receiver.spans.filter((span) => span.traceId === unsampledId)).toEqual([]);
  });

  it("fails no request while the collector is down, counts what it lost, and exports again once it is back", async () => {
    await receiver.close();
    const before = receiver.spans.length;
    const down = await chat(gw, "collector down");
    expect(down.status).toBe(200);
    await runToEnd(gw, `collector-down-${mode}`, "collector down over ws", "oa");
    const edgeOps = gw.ops.find((ops) => ops.name === (mode === "embedded" ? "gateway" : "edge-0"))!;
    await waitFor(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${edgeOps.metricsPort}/metrics`)).text();
        const dropped = /^gw_trace_spans_dropped_total\{[^}]*\} (\d+)/m.exec(text);
        return dropped && Number(dropped[1]) > 0 ? true : undefined;
      },
      { timeoutMs: 25_000, intervalMs: 250, what: "dropped spans counted" },
    );
    // Warned once per process and outage, not once per failed batch (lines reach stdout in batches).
    const exportWarnings = () => gw.fullLogs().split("\n").filter((line) => line.includes("trace export failed"));
    await expect.poll(() => exportWarnings().length, { timeout: 5_000 }).toBeGreaterThan(0);
    const warnings = exportWarnings();
    expect(warnings.length).toBeLessThanOrEqual(gw.ops.length);
    expect(receiver.spans.length).toBe(before);

    receiver = Object.assign(await startOtlpReceiver(receiver.port), { spans: receiver.spans });
    const back = await chat(gw, "collector back");
    const traceId = (back.headers.get("x-request-id") ?? "").slice(4);
    const spans = await traceSpans(receiver, traceId, completionSpans);
    expect(spans.every((span) => span.status !== STATUS_ERROR)).toBe(true);
  });
});
