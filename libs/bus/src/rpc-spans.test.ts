import { GatewayError, RunAbort } from "@gw/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { InProcessBus } from "./in-process-bus.js";
import { callRpc, defineRpc, serveRpc } from "./rpc.js";
import { type EndedSpan, installSpanSink } from "./spans.js";
import { createSubjects } from "./subjects.js";
import { runInTrace, startSpan } from "./trace-context.js";

const subjects = createSubjects("gw");
const echo = defineRpc({ service: "sessions-p3", owner: "sessions", method: "append", request: RunAbort, response: RunAbort });

let uninstall: (() => void) | undefined;
afterEach(() => uninstall?.());

describe("serveRpc spans", () => {
  it("records each handled request as a server span of its owner, a child of the caller's span", async () => {
    const spans: EndedSpan[] = [];
    uninstall = installSpanSink({ record: (span) => spans.push(span) }, { sampleRatio: 1 });
    const bus = new InProcessBus();
    serveRpc(bus, subjects, echo, (req) => {
      if (req.runId === "bad") throw new GatewayError("NOT_FOUND", "no such run");
      return req;
    });
    const caller = startSpan();
    await runInTrace(caller, async () => {
      await callRpc(bus, subjects, echo, { runId: "r1" }, { timeoutMs: 1_000 });
      await expect(callRpc(bus, subjects, echo, { runId: "bad" }, { timeoutMs: 1_000 })).rejects.toThrow("no such run");
    });
    expect(spans.map((span) => [span.service, span.name, span.kind, span.error])).toEqual([
      ["sessions", "sessions-p3.append", "server", undefined],
      ["sessions", "sessions-p3.append", "server", "NOT_FOUND"],
    ]);
    for (const span of spans) {
      expect(span.trace).toMatchObject({ traceId: caller.traceId, parentSpanId: caller.spanId });
      expect(span.trace.spanId).not.toBe(caller.spanId);
      expect(span.attributes).toEqual({ "rpc.system": "nats", "rpc.service": "sessions-p3", "rpc.method": "append" });
    }
    await bus.close();
  });
});
