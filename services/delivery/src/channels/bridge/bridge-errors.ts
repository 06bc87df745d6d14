import { ChannelError } from "@gw/channels";
import { HttpError } from "@gw/http-client";

export interface BridgeErrorOptions {
  /** The bridge's own name for the failure (BlueBubbles' `error.type`), for ChannelError.platformCode. */
  platformCode?: string;
}

/**
 * A failed call to a bridge as the ChannelError delivery acts on: 429 -> rate_limited (with the
 * wait the bridge or its proxy named), 408, 5xx, timeouts and cut connections -> unavailable,
 * any other status -> rejected with the bridge's reason, and an answer that is not what the
 * API promises -> rejected (the message may have gone out; sending it again could double it).
 * Anything that is not an HttpError (the caller's AbortError, a bug) is returned untouched.
 * HttpError messages are already scrubbed of every secret the client knows.
 */
export function bridgeChannelError(err: unknown, opts: BridgeErrorOptions = {}): unknown {
  if (!(err instanceof HttpError)) return err;
  const base = { cause: err, status: err.status, platformCode: opts.platformCode };
  switch (err.kind) {
    case "status":
      if (err.status === 429) return new ChannelError("rate_limited", err.message, { ...base, retryAfterMs: err.retryAfterMs });
      return new ChannelError(err.retryable ? "unavailable" : "rejected", err.message, base);
    case "timeout":
    case "network":
      return new ChannelError("unavailable", err.message, base);
    default:
      return new ChannelError("rejected", err.message, base);
  }
}

/** Rejects with the mapped error; for `.catch()` chains and `catch` blocks alike. */
export function throwBridgeError(err: unknown, opts?: BridgeErrorOptions): never {
  throw bridgeChannelError(err, opts);
}
