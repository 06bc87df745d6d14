import { ChannelError, type ChannelErrorKind } from "@gw/channels";
import { HttpError } from "@gw/http-client";

/** How one platform reads its error bodies beyond the HTTP status. */
export interface PlatformErrorReading {
  /** The platform's own error code in a JSON error body (Discord `code`, Graph `error.code`). */
  codeOf(json: unknown): string | undefined;
  /**
   * A kind the platform's code decides whatever the HTTP status says (Graph reports throttling
   * as code 4 or 130429, not always with a 429). Undefined: the status decides.
   */
  kindOf?(code: string | undefined, status: number): ChannelErrorKind | undefined;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function kindOfStatus(status: number): ChannelErrorKind {
  if (status === 429) return "rate_limited";
  if (status === 408 || status >= 500) return "unavailable";
  return "rejected";
}

/**
 * What a failed platform call throws, as the channel port wants it: 429 `rate_limited` with the
 * platform's wait, 5xx, timeouts, cut connections and garbled answers `unavailable`, any other
 * 4xx `rejected` with the platform's reason. Anything that is not an HttpError (the caller's
 * AbortError, a bug) is returned untouched. HttpError messages are scrubbed of every configured
 * secret by the client, so they can be used as they are.
 */
export function channelErrorOf(err: unknown, reading: PlatformErrorReading): unknown {
  if (!(err instanceof HttpError)) return err;
  if (err.kind !== "status" || err.status === undefined) {
    // timeout, network, an answer that is not what the platform documents: it may work later.
    return new ChannelError("unavailable", err.message, { cause: err });
  }
  const code = reading.codeOf(parseJson(err.body));
  const kind = reading.kindOf?.(code, err.status) ?? kindOfStatus(err.status);
  return new ChannelError(kind, err.message, {
    status: err.status,
    ...(code === undefined ? {} : { platformCode: code }),
    ...(kind === "rate_limited" && err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
    cause: err,
  });
}

/** Whether `err` is the caller's abort (or deadline), which adapters let through unmapped. */
export function isAbort(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === "AbortError" || name === "TimeoutError";
}
