import { RequestFrameSchema } from "@gw/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRequestFrame } from "./frames.js";

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
