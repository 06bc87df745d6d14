import { ChannelError, type ChannelErrorKind } from "@gw/channels";
import { HttpError } from "@gw/http-client";

/** What a plugin read in the platform's error body beyond the HTTP status. */
export interface PlatformDetail {
  /** The platform's own error code (Telegram `error_code`, Slack `error`, Discord `code`, Graph `error.code`). */
  platformCode?: string;
  /**
   * A kind the platform's code decides whatever the status says (Graph reports throttling as
   * code 4 or 130429, not always with a 429). Undefined: the status decides.
   */
  kind?: ChannelErrorKind;
  /**
   * An answer that does not parse as the API promises: `unavailable` (retry) by default. A
   * bridge on the user's own machine says `rejected`: its message may have gone out already, and
   * sending it again could double it.
   */
  garbled?: "unavailable" | "rejected";
}

function kindOfStatus(status: number | undefined): ChannelErrorKind {
  if (status === 429) return "rate_limited";
  return status === 408 || (status ?? 0) >= 500 ? "unavailable" : "rejected";
}

/**
 * The one mapping of a failed platform call to the ChannelError delivery acts on
 * (channel-error.ts): a 429 is `rate_limited` with the platform's wait (account-wide when the
 * client's errorBody hook said so); a 5xx, 408, timeout or cut
 * connection `unavailable`; any other status `rejected` with the platform's reason; a media URL
 * the SSRF guard refuses, or one too large to upload, `rejected` (asking again changes nothing).
 * Anything that is not an HttpError (an AbortError from the caller's signal, a bug) is returned
 * untouched, so delivery can tell its own deadline from a platform outage. HttpError messages are
 * already scrubbed of every configured secret by the client.
 */
export function channelErrorFromHttp(err: unknown, detail: PlatformDetail = {}): unknown {
  if (!(err instanceof HttpError)) return err;
  let kind: ChannelErrorKind;
  switch (err.kind) {
    case "status":
      kind = detail.kind ?? kindOfStatus(err.status);
      break;
    case "timeout":
    case "network":
      kind = "unavailable";
      break;
    case "invalid_response":
      kind = detail.garbled ?? "unavailable";
      break;
    case "ssrf":
    case "too_large":
      kind = "rejected";
      break;
  }
  return new ChannelError(kind, err.message, {
    status: err.status,
    ...(detail.platformCode === undefined ? {} : { platformCode: detail.platformCode }),
    ...(kind === "rate_limited" && err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
    // The plugin's errorBody hook read that the limit holds every call of the account.
    ...(kind === "rate_limited" && err.accountWide ? { rateLimitScope: "account" as const } : {}),
    cause: err,
  });
}

/** How one platform reads its JSON error bodies: its code, and a kind the code decides. */
export interface PlatformErrorReading {
  codeOf(json: unknown): string | undefined;
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

/** channelErrorFromHttp with the platform's code and kind read from the error body. */
export function channelErrorOf(err: unknown, reading: PlatformErrorReading): unknown {
  if (!(err instanceof HttpError) || err.kind !== "status" || err.status === undefined) return channelErrorFromHttp(err);
  const platformCode = reading.codeOf(parseJson(err.body));
  const kind = reading.kindOf?.(platformCode, err.status);
  return channelErrorFromHttp(err, {
    ...(platformCode === undefined ? {} : { platformCode }),
    ...(kind === undefined ? {} : { kind }),
  });
}

/** Whether `err` is the caller's abort (or deadline), which adapters let through unmapped. */
export function isAbort(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === "AbortError" || name === "TimeoutError";
}
