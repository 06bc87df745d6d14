import { isGatewayError } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { boundToolResult } from "./result-bound.js";

const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

describe("boundToolResult", () => {
  it("passes a result within the limit through unchanged", () => {
    const result = { content: "hello", status: 200 };
    expect(boundToolResult("t", result, 1_000)).toBe(result);
  });

  it("cuts content to fit, keeps the other fields, marks the cut and tells the model", () => {
    const result = { content: "x".repeat(5_000), status: 200, url: "https://example.org" };
    const bounded = boundToolResult("http.fetch", result, 1_000);
    expect(size(bounded)).toBeLessThanOrEqual(1_000);
    expect(size(bounded)).toBeGreaterThan(900);
    expect(bounded).toMatchObject({ status: 200, url: "https://example.org", truncated: true });
    expect(bounded.content).toMatch(/^x+\n\[truncated by the gateway: the result was 5\d{3} bytes, the limit is 1000\]$/);
  });

  it("counts JSON escapes and multi-byte characters, and never splits a surrogate pair", () => {
    for (const unit of ['"', "\n", "\u0001", "é", "😀"]) {
      const bounded = boundToolResult("t", { content: unit.repeat(3_000) }, 700);
      expect(size(bounded)).toBeLessThanOrEqual(700);
      expect(bounded.content.startsWith(unit)).toBe(true);
      expect(bounded.content).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    }
  });

  it("refuses with PAYLOAD_TOO_LARGE when the fields other than content are too big", () => {
    let err: unknown;
    try {
      boundToolResult("t", { content: "a", blob: "b".repeat(2_000) }, 1_000);
    } catch (e) {
      err = e;
    }
    expect(isGatewayError(err) && err.code).toBe("PAYLOAD_TOO_LARGE");
    expect((err as Error).message).toContain("runner.maxToolResultBytes");
  });
});
