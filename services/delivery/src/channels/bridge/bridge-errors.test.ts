import type { ChannelError } from "@gw/channels";
import { HttpError, SsrfError } from "@gw/http-client";
import { describe, expect, it } from "vitest";
import { bridgeChannelError } from "./bridge-errors.js";

const status = (code: number, retryAfterMs?: number) =>
  new HttpError(`bridge answered HTTP ${code}: why`, { kind: "status", status: code, retryable: code === 429 || code === 408 || code >= 500, retryAfterMs });

describe("bridgeChannelError", () => {
  it("maps statuses: 429 rate_limited with its wait, 408 and 5xx unavailable, other 4xx rejected", () => {
    const limited = bridgeChannelError(status(429, 7_000)) as ChannelError;
    expect([limited.kind, limited.retryAfterMs, limited.status]).toEqual(["rate_limited", 7_000, 429]);
    for (const code of [408, 500, 502, 503]) expect((bridgeChannelError(status(code)) as ChannelError).kind).toBe("unavailable");
    for (const code of [400, 401, 404, 413]) expect((bridgeChannelError(status(code)) as ChannelError).kind).toBe("rejected");
  });

  it("keeps the bridge's reason, the cause and a platform code", () => {
    const cause = status(400);
    const err = bridgeChannelError(cause, { platformCode: "Validation Error" }) as ChannelError;
    expect([err.message, err.cause, err.platformCode]).toEqual(["bridge answered HTTP 400: why", cause, "Validation Error"]);
  });

  it("treats timeouts and cut connections as unavailable, odd answers and refused targets as rejected", () => {
    expect((bridgeChannelError(new HttpError("slow", { kind: "timeout", retryable: true })) as ChannelError).kind).toBe("unavailable");
    expect((bridgeChannelError(new HttpError("cut", { kind: "network", retryable: true })) as ChannelError).kind).toBe("unavailable");
    expect((bridgeChannelError(new HttpError("odd", { kind: "invalid_response", retryable: false })) as ChannelError).kind).toBe("rejected");
    expect((bridgeChannelError(new SsrfError("no")) as ChannelError).kind).toBe("rejected");
  });

  it("passes aborts and anything else through untouched", () => {
    const abort = new DOMException("stopped", "AbortError");
    expect(bridgeChannelError(abort)).toBe(abort);
    const bug = new TypeError("bug");
    expect(bridgeChannelError(bug)).toBe(bug);
  });
});
