import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isGatewayError } from "../errors.js";
import { AgentEventPayloadSchema, decodeAgentEventPayload, parseAgentEventPayload } from "./client-events.js";

/** What the schema makes of `value`: its output, or undefined where it refuses. */
const bySchema = (value: unknown) => {
  const parsed = AgentEventPayloadSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
};

const valid = { runId: "r1", seq: 3, stream: "assistant", data: { type: "text", text: "hi" } };

describe("parseAgentEventPayload", () => {
  it("answers as the schema does for payloads and near misses", () => {
    const cases: unknown[] = [
      valid,
      { ...valid, extra: 1 },
      { ...valid, seq: Number.MAX_SAFE_INTEGER },
      { ...valid, stream: "lifecycle", data: {} },
      { ...valid, stream: "tool" },
      { ...valid, seq: 0 },
      { ...valid, seq: -1 },
      { ...valid, seq: 1.5 },
      { ...valid, seq: 2 ** 53 },
      { ...valid, seq: Number.NaN },
      { ...valid, seq: Number.POSITIVE_INFINITY },
      { ...valid, seq: "3" },
      { ...valid, runId: 7 },
      { ...valid, stream: "other" },
      { ...valid, data: [] },
      { ...valid, data: null },
      { ...valid, data: "text" },
      { runId: "r1", seq: 1, stream: "assistant" },
      [],
      null,
      "payload",
      42,
    ];
    for (const value of cases) expect(parseAgentEventPayload(value), JSON.stringify(value)).toEqual(bySchema(value));
  });

  it("agrees with the schema on generated JSON", () => {
    const field = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constantFrom("assistant", "tool", "lifecycle"), fc.constant(null));
    const payload = fc.record(
      { runId: field, seq: fc.oneof(fc.integer(), field), stream: field, data: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), field, fc.array(field)), other: field },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(payload, (value) => {
        expect(parseAgentEventPayload(value)).toEqual(bySchema(value));
      }),
    );
  });

  it("drops keys the schema does not name, and keeps data as it came", () => {
    const data = { type: "text", text: "hi", extra: [1] };
    expect(parseAgentEventPayload({ ...valid, data, unknown: true })).toEqual({ ...valid, data });
  });
});

describe("decodeAgentEventPayload", () => {
  const messageOf = (bytes: Uint8Array) => {
    try {
      decodeAgentEventPayload(bytes);
    } catch (err) {
      return isGatewayError(err) ? `${err.code}: ${err.message}` : String(err);
    }
    return "no error";
  };

  it("reads a payload's bytes, a view into a larger buffer included", () => {
    const framed = Buffer.from(`xx${JSON.stringify(valid)}yy`);
    expect(decodeAgentEventPayload(framed.subarray(2, framed.length - 2))).toEqual(valid);
  });

  it("refuses what is not JSON or not a payload as INTERNAL", () => {
    expect(messageOf(Buffer.from("{"))).toBe("INTERNAL: malformed agent event payload on the bus");
    expect(messageOf(Buffer.from(JSON.stringify({ ...valid, seq: 0 })))).toBe("INTERNAL: malformed agent event payload on the bus");
  });
});
