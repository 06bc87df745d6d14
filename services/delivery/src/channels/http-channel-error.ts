import { ChannelError } from "@gw/channels";
import { HttpError } from "@gw/http-client";

/** What a platform said beyond the HTTP status: its own error code. */
export interface PlatformDetail {
  platformCode?: string;
}

/**
 * The ChannelError for a failed platform call (channel-error.ts): a 429 is `rate_limited` with
 * the platform's wait, a 5xx, 408, timeout, cut connection or unreadable answer is
 * `unavailable`, any other status is `rejected` with the platform's reason. A media URL the SSRF
 * guard refuses, or one too large to upload, is `rejected` too: asking again changes nothing.
 * Anything that is not an HttpError (an AbortError from the caller's signal, a bug) is returned
 * untouched, so delivery can tell its own deadline from a platform outage.
 *
 * The HttpError's message is already scrubbed of every configured secret by the client.
 */
export function channelErrorFromHttp(err: unknown, detail: PlatformDetail = {}): unknown {
  if (!(err instanceof HttpError)) return err;
  const opts = { status: err.status, platformCode: detail.platformCode, cause: err };
  switch (err.kind) {
    case "status":
      if (err.status === 429) return new ChannelError("rate_limited", err.message, { ...opts, retryAfterMs: err.retryAfterMs });
      if (err.retryable) return new ChannelError("unavailable", err.message, opts);
      return new ChannelError("rejected", err.message, opts);
    case "timeout":
    case "network":
    case "invalid_response":
      return new ChannelError("unavailable", err.message, opts);
    case "ssrf":
    case "too_large":
      return new ChannelError("rejected", err.message, opts);
  }
}
