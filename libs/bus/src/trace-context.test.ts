import { describe, expect, it } from "vitest";
import {
  currentRequestId,
  currentTrace,
  formatTraceparent,
  outgoingTraceparent,
  parseTraceparent,
  readTraceHeaders,
  requestIdOf,
  runInTrace,
  startRequestTrace,
  startSpan,
  traceLogFields,
  writeTraceHeaders,
} from "./trace-context.js";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("trace context", () => {
  it("parses and formats W3C traceparent", () => {
    expect(parseTraceparent(VALID)).toEqual({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      sampled: true,
    });
    expect(formatTraceparent(parseTraceparent(VALID)!)).toBe(VALID);
    expect(parseTraceparent(VALID.replace(/-01$/, "-00"))?.sampled).toBe(false);
  });

  it("refuses malformed values: version ff, zero ids, wrong lengths, upper case", () => {
    for (const bad of [
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "",
      undefined,
    ])
      expect(parseTraceparent(bad), String(bad)).toBeUndefined();
  });

  it("starts a span in the parent's trace, or in a new trace without a valid parent", () => {
    const child = startSpan(VALID);
    expect(child.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(child.spanId).not.toBe("00f067aa0ba902b7");
    expect(child.spanId).toMatch(/^[0-9a-f]{16}$/);
    const fresh = startSpan("garbage");
    expect(fresh.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(startSpan().traceId).not.toBe(fresh.traceId);
  });

  it("follows async work, and names its span as the parent of requests sent from it", async () => {
    expect(currentTrace()).toBeUndefined();
    expect(outgoingTraceparent()).toBeUndefined();
    expect(traceLogFields()).toEqual({});
    const trace = startSpan();
    await runInTrace(trace, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect(currentTrace()).toBe(trace);
      expect(traceLogFields()).toEqual({ reqId: `req_${trace.traceId}` });
      const sent = parseTraceparent(outgoingTraceparent());
      expect(sent?.traceId).toBe(trace.traceId);
      expect(sent?.spanId).toBe(trace.spanId);
      const received = startSpan(outgoingTraceparent());
      expect(received.parentSpanId).toBe(trace.spanId);
      expect(received.spanId).not.toBe(trace.spanId);
    });
    expect(currentTrace()).toBeUndefined();
  });
});

describe("request ids", () => {
  const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

  it("are the gateway's: a continued client trace keeps its trace id but gets a new request id each time", () => {
    const fresh = startRequestTrace(undefined);
    expect(fresh.requestId).toBeUndefined();
    expect(requestIdOf(fresh)).toBe(`req_${fresh.traceId}`);
    const first = startRequestTrace(VALID);
    const second = startRequestTrace(VALID);
    expect(first).toMatchObject({ traceId: TRACE_ID, parentSpanId: "00f067aa0ba902b7", sampled: true });
    expect(requestIdOf(first)).toMatch(/^req_[0-9a-f]{32}$/);
    expect(requestIdOf(first)).not.toBe(`req_${TRACE_ID}`);
    expect(requestIdOf(second)).not.toBe(requestIdOf(first));
    expect(startRequestTrace("garbage").requestId).toBeUndefined();
  });

  it("travel with the trace: child spans, log fields, and the bus headers", () => {
    const trace = startRequestTrace(VALID);
    const requestId = requestIdOf(trace);
    expect(requestIdOf(startSpan(trace))).toBe(requestId);
    const headers = new Map<string, string>();
    runInTrace(trace, () => {
      expect(currentRequestId()).toBe(requestId);
      // The trace id too, so the log lines of a continued trace still join its spans.
      expect(traceLogFields()).toEqual({ reqId: requestId, traceId: TRACE_ID });
      writeTraceHeaders(headers);
    });
    expect([...headers.keys()].sort()).toEqual(["gw-request-id", "traceparent"]);
    const received = startSpan(readTraceHeaders(headers));
    expect(received).toMatchObject({ traceId: TRACE_ID, parentSpanId: trace.spanId, requestId });

    // A trace the edge started itself sends traceparent alone: its request id is its trace id's.
    const own = startSpan();
    const plain = new Map<string, string>();
    runInTrace(own, () => writeTraceHeaders(plain));
    expect([...plain.keys()]).toEqual(["traceparent"]);
    expect(requestIdOf(startSpan(readTraceHeaders(plain)))).toBe(`req_${own.traceId}`);
    // A malformed request id header is ignored; no traceparent, no trace.
    plain.set("gw-request-id", "req_not-an-id");
    expect(readTraceHeaders(plain)?.requestId).toBeUndefined();
    expect(readTraceHeaders(new Map([["gw-request-id", requestId]]))).toBeUndefined();
    expect(readTraceHeaders(undefined)).toBeUndefined();
  });
});

describe("new trace and span ids", () => {
  it("are lowercase hex of the right length, distinct, and drawn across pool refills", () => {
    const traces = new Set<string>();
    const spans = new Set<string>();
    // 2,000 spans of 24 bytes each pass through the 8 KiB pool several times.
    for (let i = 0; i < 2_000; i++) {
      const span = startSpan();
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(/^0+$/.test(span.traceId) || /^0+$/.test(span.spanId)).toBe(false);
      traces.add(span.traceId);
      spans.add(span.spanId);
    }
    expect(traces.size).toBe(2_000);
    expect(spans.size).toBe(2_000);
  });
});
