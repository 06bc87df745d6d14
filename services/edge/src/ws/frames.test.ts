import { requestIdOf, runInTrace, startSpan, traceLogFields } from "@gw/bus";
import { GatewayError, RequestFrameSchema } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { errorFrame, parseRequestFrame } from "./frames.js";

/** Envelopes near the valid shape: right and wrong types and values in every field. */
const field = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant("2.0"),
  fc.string({ maxLength: 140 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);
const mostly = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: field });
const envelope = fc.record(
  {
    jsonrpc: mostly(fc.constant("2.0")),
    id: mostly(fc.oneof(fc.integer(), fc.double())),
    method: mostly(fc.string({ maxLength: 130 })),
    params: mostly(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })),
    extra: field,
  },
  { requiredKeys: [] },
);

describe("parseRequestFrame", () => {
  it("accepts exactly the frames RequestFrameSchema accepts, with the same result", () => {
    let accepted = 0;
    fc.assert(
      fc.property(envelope, (value) => {
        const text = JSON.stringify(value);
        const parsed = parseRequestFrame(Buffer.from(text));
        const reference = RequestFrameSchema.safeParse(JSON.parse(text));
        const hasId = "id" in (JSON.parse(text) as object) && (JSON.parse(text) as { id: unknown }).id !== null;
        expect(parsed.ok).toBe(reference.success && hasId);
        if (parsed.ok && reference.success) expect(parsed.frame).toEqual(reference.data);
        if (parsed.ok) accepted++;
      }),
      { numRuns: 3_000 },
    );
    // Enough of the runs were valid frames for the comparison to mean something.
    expect(accepted).toBeGreaterThan(300);
  });

  it("takes a plain valid frame as it is, params included", () => {
    const parsed = parseRequestFrame(
      Buffer.from('{"jsonrpc":"2.0","id":7,"method":"sessions.preview","params":{"key":"a","limit":3}}'),
    );
    expect(parsed).toEqual({
      ok: true,
      frame: { jsonrpc: "2.0", id: 7, method: "sessions.preview", params: { key: "a", limit: 3 } },
    });
  });
});

describe("errorFrame", () => {
  function capturingLogger() {
    const lines: string[] = [];
    const logger = createLogger({ service: "test", level: "info", mixin: traceLogFields, destination: { write: (line: string) => lines.push(line) } });
    return { logger, lines };
  }
  const WORDS = "cannot reach fake at http://10.0.0.7:8000/v1/chat/completions: connect ECONNREFUSED";

  it("gives a server-side failure's words to control, and to anyone else the catalogue's message and the request id, the words logged under it", () => {
    const { logger, lines } = capturingLogger();
    const trace = startSpan();
    const requestId = requestIdOf(trace);
    const failure = new GatewayError("MODEL_ERROR", WORDS, { details: { runId: "r1" } });
    runInTrace(trace, () => {
      expect(errorFrame(7, failure, logger, true)).toEqual({ id: 7, ok: false, error: { code: "MODEL_ERROR", message: WORDS, details: { runId: "r1" } } });
      expect(lines).toEqual([]);
      expect(errorFrame(7, failure, logger)).toEqual({
        id: 7,
        ok: false,
        error: { code: "MODEL_ERROR", message: `the model provider failed (request id ${requestId})`, details: { runId: "r1", requestId } },
      });
    });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ reqId: requestId, err: { message: WORDS } });
  });

  it("withholds every 5xx code's words, and never a client error's", () => {
    const { logger } = capturingLogger();
    runInTrace(startSpan(), () => {
      for (const code of ["UNAVAILABLE", "TIMEOUT", "INTERNAL", "DELIVERY_FAILED"] as const) {
        expect(errorFrame(1, new GatewayError(code, "no responder on gw.rpc.sessions.history"), logger).error.message, code).not.toContain("gw.rpc");
      }
      for (const code of ["INVALID_REQUEST", "FORBIDDEN", "NOT_FOUND", "ABORTED", "RATE_LIMITED"] as const) {
        expect(errorFrame(1, new GatewayError(code, "params.key: unknown session: a"), logger).error).toEqual({ code, message: "params.key: unknown session: a" });
      }
      const untyped = errorFrame(1, new Error("connect ECONNREFUSED 10.1.2.3:4222"), logger);
      expect(untyped.error).toMatchObject({ code: "INTERNAL", message: expect.stringMatching(/^internal error \(request id req_[0-9a-f]{32}\)$/) });
    });
  });
});
