import { type ChannelError } from "@gw/channels";
import { HttpError } from "@gw/http-client";
import { describe, expect, it } from "vitest";
import { channelErrorOf, isAbort, type PlatformErrorReading } from "./http-channel-error.js";

const reading: PlatformErrorReading = {
  codeOf: (json) => ((json as { code?: unknown } | undefined)?.code === undefined ? undefined : String((json as { code: unknown }).code)),
  kindOf: (code) => (code === "throttled" ? "rate_limited" : undefined),
};

const status = (code: number, body?: unknown, retryAfterMs?: number) =>
  new HttpError(`x answered HTTP ${code}`, { kind: "status", status: code, retryable: code >= 500 || code === 429, body: body === undefined ? undefined : JSON.stringify(body), retryAfterMs });

describe("channelErrorOf", () => {
  it("maps statuses: 429 with its wait, 408 and 5xx unavailable, other 4xx rejected with the platform's code", () => {
    expect(channelErrorOf(status(429, undefined, 3_000), reading)).toMatchObject({ kind: "rate_limited", retryAfterMs: 3_000, status: 429 });
    expect(channelErrorOf(status(408), reading)).toMatchObject({ kind: "unavailable" });
    expect(channelErrorOf(status(503), reading)).toMatchObject({ kind: "unavailable", retryable: true });
    const rejected = channelErrorOf(status(403, { code: 50013 }), reading) as ChannelError;
    expect(rejected).toMatchObject({ kind: "rejected", platformCode: "50013", retryable: false, message: "x answered HTTP 403" });
    expect(rejected.cause).toBeInstanceOf(HttpError);
  });

  it("lets the platform's code override the status, and keeps a wait only on rate limits", () => {
    expect(channelErrorOf(status(400, { code: "throttled" }), reading)).toMatchObject({ kind: "rate_limited", platformCode: "throttled" });
    expect(channelErrorOf(status(400, { code: 7 }, 5_000), reading)).toMatchObject({ kind: "rejected", retryAfterMs: undefined });
  });

  it("treats timeouts, network failures and garbled answers as unavailable", () => {
    for (const kind of ["timeout", "network", "invalid_response"] as const) {
      expect(channelErrorOf(new HttpError("x", { kind, retryable: kind !== "invalid_response" }), reading)).toMatchObject({ kind: "unavailable" });
    }
  });

  it("passes aborts and bugs through untouched", () => {
    const abort = new DOMException("stop", "AbortError");
    const bug = new TypeError("oops");
    expect(channelErrorOf(abort, reading)).toBe(abort);
    expect(channelErrorOf(bug, reading)).toBe(bug);
    expect(isAbort(abort) && isAbort(new DOMException("late", "TimeoutError"))).toBe(true);
    expect(isAbort(bug) || isAbort(undefined)).toBe(false);
  });
});
