import { describe, expect, it } from "vitest";
import { exceedsJsonDepth, topLevelPrimitive } from "./json-depth.js";

const nested = (depth: number, open = "[", close = "]") => open.repeat(depth) + close.repeat(depth);

describe("exceedsJsonDepth", () => {
  it("counts object and array nesting up to the limit", () => {
    expect(exceedsJsonDepth(nested(3), 3)).toBe(false);
    expect(exceedsJsonDepth(nested(4), 3)).toBe(true);
    expect(exceedsJsonDepth('{"a":{"b":[1,{"c":2}]}}', 4)).toBe(false);
    expect(exceedsJsonDepth('{"a":{"b":[1,{"c":{}}]}}', 4)).toBe(true);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(exceedsJsonDepth(`{"s":"${"[".repeat(100)}"}`, 1)).toBe(false);
    expect(exceedsJsonDepth(`{"s":"\\"${"{".repeat(100)}"}`, 1)).toBe(false);
    expect(exceedsJsonDepth(`{"s":"\\\\","t":${nested(5)}}`, 3)).toBe(true);
  });

  it("answers for siblings by their own depth, not the sum", () => {
    expect(exceedsJsonDepth(`[${Array(1000).fill(nested(3)).join(",")}]`, 4)).toBe(false);
  });

  it("refuses 100,000 levels without parsing them", () => {
    expect(exceedsJsonDepth(`{"params":${nested(100_000)}}`)).toBe(true);
  });
});

describe("topLevelPrimitive", () => {
  it("reads a top-level key's primitive value without parsing nested ones", () => {
    const deep = nested(100_000);
    expect(topLevelPrimitive(`{"jsonrpc":"2.0","id":7,"params":${deep}}`, "id")).toBe(7);
    expect(topLevelPrimitive(`{"params":${deep}, "id" : "abc"}`, "id")).toBe("abc");
    expect(topLevelPrimitive(`{"id":-1.5e3}`, "id")).toBe(-1500);
    expect(topLevelPrimitive(`{"id":null}`, "id")).toBeNull();
  });

  it("ignores nested keys, values that are not primitives, and strings that only look like keys", () => {
    expect(topLevelPrimitive(`{"params":{"id":1}}`, "id")).toBeUndefined();
    expect(topLevelPrimitive(`{"id":[1]}`, "id")).toBeUndefined();
    expect(topLevelPrimitive(`{"a":"id","b":2}`, "id")).toBeUndefined();
    expect(topLevelPrimitive(`[{"id":1}]`, "id")).toBeUndefined();
    expect(topLevelPrimitive(`{"id`, "id")).toBeUndefined();
    expect(topLevelPrimitive(`{"\\u0069d":3}`, "id")).toBe(3);
  });
});
