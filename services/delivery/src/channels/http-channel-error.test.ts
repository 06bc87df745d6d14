import { ChannelError } from "@gw/channels";
import { HttpError, type HttpErrorKind, SsrfError } from "@gw/http-client";
import { describe, expect, it } from "vitest";
import { channelErrorFromHttp } from "./http-channel-error.js";

const status = (code: number, retryAfterMs?: number) =>
  new HttpError(`platform answered HTTP ${code}`, { kind: "status", status: code, retryable: code === 429 || code === 408 || code >= 500, retryAfterMs });
const failed = (kind: HttpErrorKind) => new HttpError(`platform failed: ${kind}`, { kind, retryable: kind === "timeout" || kind === "network" });

describe("channelErrorFromHttp", () => {
  it("turns a 429 into rate_limited with the platform's wait", () => {
    const err = channelErrorFromHttp(status(429, 7_000), { platformCode: "429" });
    expect(err).toBeInstanceOf(ChannelError);
    expect(err).toMatchObject({ kind: "rate_limited", retryAfterMs: 7_000, status: 429, platformCode: "429", retryable: true });
  });

  it("turns 5xx, 408, timeouts, cut connections and unreadable answers into unavailable", () => {
    for (const err of [status(500), status(503), status(408), failed("timeout"), failed("network"), failed("invalid_response")]) {
      expect(channelErrorFromHttp(err)).toMatchObject({ kind: "unavailable", retryable: true });
    }
  });

  it("turns other statuses, refused and oversized media into rejected, keeping the message and cause", () => {
    for (const err of [status(400), status(401), status(403), status(404), new SsrfError("refusing to fetch 10.0.0.1"), failed("too_large")]) {
      const mapped = channelErrorFromHttp(err) as ChannelError;
      expect(mapped.kind).toBe("rejected");
      expect(mapped.message).toBe(err.message);
      expect(mapped.cause).toBe(err);
    }
  });

  it("passes anything else through untouched (aborts above all)", () => {
    const abort = new DOMException("The operation was aborted", "AbortError");
    expect(channelErrorFromHttp(abort)).toBe(abort);
    const bug = new TypeError("x is undefined");
    expect(channelErrorFromHttp(bug)).toBe(bug);
  });
});
