import { afterEach, describe, expect, it } from "vitest";
import { beginSpan, type EndedSpan, installSpanSink, tracingEnabled } from "./spans.js";
import { currentTrace, runInTrace, startSpan } from "./trace-context.js";

const uninstalls: Array<() => void> = [];
afterEach(() => {
  for (const uninstall of uninstalls.splice(0)) uninstall();
});

function recorder(sampleRatio = 1): EndedSpan[] {
  const spans: EndedSpan[] = [];
  uninstalls.push(installSpanSink({ record: (span) => spans.push(span) }, { sampleRatio }));
  return spans;
}

describe("span export", () => {
  it("is off until a sink is installed: no span, and new traces are not sampled", () => {
    expect(tracingEnabled()).toBe(false);
    const trace = startSpan();
    expect(trace.sampled).toBe(false);
    expect(beginSpan("edge", "agent", "server", { ...trace, sampled: true })).toBeUndefined();
  });

  it("records a sampled span once, with its trace's ids, times, attributes and failure", () => {
    const spans = recorder();
    const root = startSpan();
    expect(root.sampled).toBe(true);
    const child = startSpan(root);
    expect(child).toMatchObject({ traceId: root.traceId, parentSpanId: root.spanId, sampled: true });
    const span = runInTrace(child, () => beginSpan("sessions", "sessions.append", "server"));
    span?.set("rpc.method", "append").set("absent", undefined).end("NOT_FOUND");
    span?.set("late", true).end();
    expect(spans).toEqual([
      {
        service: "sessions",
        name: "sessions.append",
        kind: "server",
        trace: child,
        startTime: expect.any(Number),
        endTime: expect.any(Number),
        attributes: { "rpc.method": "append" },
        error: "NOT_FOUND",
      },
    ]);
    expect(spans[0]!.endTime).toBeGreaterThanOrEqual(spans[0]!.startTime);
    beginSpan("edge", "ok", "server", root)?.end("ok");
    expect(spans[1]?.error).toBeUndefined();
  });

  it("leaves unsampled traces and code outside any trace unrecorded", () => {
    const spans = recorder();
    const unsampled = startSpan("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    expect(unsampled.sampled).toBe(false);
    expect(runInTrace(unsampled, () => beginSpan("edge", "x", "server"))).toBeUndefined();
    expect(currentTrace()).toBeUndefined();
    expect(beginSpan("edge", "x", "server")).toBeUndefined();
    expect(spans).toEqual([]);
  });

  it("samples new traces at the ratio, and stops when the last sink is removed", () => {
    recorder(0);
    expect(Array.from({ length: 50 }, () => startSpan().sampled)).not.toContain(true);
    recorder(0.5);
    const sampled = Array.from({ length: 2_000 }, () => startSpan().sampled).filter(Boolean).length;
    expect(sampled).toBeGreaterThan(800);
    expect(sampled).toBeLessThan(1_200);
    for (const uninstall of uninstalls.splice(0)) uninstall();
    expect(tracingEnabled()).toBe(false);
    expect(startSpan().sampled).toBe(false);
  });
});
