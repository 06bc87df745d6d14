import { describe, expect, it } from "vitest";
import { parseRetryAfter, retryAfterFromBody } from "./retry-after.js";

const NOW = Date.parse("2026-11-23T10:00:00Z");

describe("parseRetryAfter", () => {
  it.each([
    ["0", 0],
    ["5", 5_000],
    [" 120 ", 120_000],
    ["1.5", 1_500],
    [["7", "9"], 7_000],
  ] as const)("reads delay-seconds %j", (header, ms) => {
    expect(parseRetryAfter(header, NOW)).toBe(ms);
  });

  it.each([
    ["Mon, 23 Nov 2026 10:00:30 GMT", 30_000],
    ["Monday, 23-Nov-26 10:01:00 GMT", 60_000],
    ["Mon Nov 23 10:00:10 2026", 10_000],
    ["Sun, 22 Nov 2026 10:00:00 GMT", 0],
  ])("reads the HTTP-date %j (a past date is 0)", (header, ms) => {
    // asctime has no zone and is read as local time; compare against the same reading
    const expected = header.endsWith("2026") ? Math.max(0, Date.parse(header) - NOW) : ms;
    expect(parseRetryAfter(header, NOW)).toBe(expected);
  });

  it.each([undefined, null, "", "   ", "soon", "-5", "1e3", "0x10", "5 seconds", "Tomorrow", "2026-11-23T10:00:30Z", "Mon, 99 Foo 2026 GMT", []])(
    "ignores %j",
    (header) => {
      expect(parseRetryAfter(header as string | undefined, NOW)).toBeUndefined();
    },
  );
});

describe("retryAfterFromBody", () => {
  it("reads Telegram's parameters.retry_after and Discord's retry_after, in seconds", () => {
    expect(retryAfterFromBody({ ok: false, error_code: 429, parameters: { retry_after: 12 } })).toBe(12_000);
    expect(retryAfterFromBody({ message: "You are being rate limited.", retry_after: 0.642, global: false })).toBe(642);
  });

  it.each([undefined, null, "retry_after", 5, {}, { retry_after: "5" }, { retry_after: -1 }, { parameters: null }, { parameters: { retry_after: Infinity } }])(
    "ignores %j",
    (json) => {
      expect(retryAfterFromBody(json)).toBeUndefined();
    },
  );
});
