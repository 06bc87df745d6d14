import { describe, expect, it } from "vitest";
import { z } from "zod";
import { hasKeyPath, schemaKeyPaths } from "./known-keys.js";

describe("schemaKeyPaths / hasKeyPath", () => {
  const schema = z.strictObject({
    a: z.strictObject({ b: z.int().default(1), c: z.array(z.strictObject({ d: z.string() })).optional() }).prefault({}),
    m: z.record(z.string(), z.strictObject({ kind: z.string() })),
    u: z.union([z.strictObject({ x: z.string() }), z.strictObject({ y: z.string() })]),
    open: z.object({ fixed: z.string().optional() }).catchall(z.looseObject({ k: z.string() })),
  });

  it("walks objects, arrays, records, unions and catch-alls through their wrappers", () => {
    expect(schemaKeyPaths(schema).sort()).toEqual(
      ["a", "a.b", "a.c", "a.c[].d", "m", "m.*", "m.*.kind", "u", "u.x", "u.y", "open", "open.fixed", "open.*", "open.*.k"].sort(),
    );
  });

  it("finds a path when any key or element has it", () => {
    const value = { a: { c: [{}, { d: "x" }] }, m: { one: {}, two: { kind: "k" } } };
    expect(hasKeyPath(value, "a.c[].d")).toBe(true);
    expect(hasKeyPath(value, "m.*.kind")).toBe(true);
    expect(hasKeyPath(value, "a.b")).toBe(false);
    expect(hasKeyPath({ a: { c: [{}] } }, "a.c[].d")).toBe(false);
    expect(hasKeyPath({ m: {} }, "m.*")).toBe(false);
  });
});
