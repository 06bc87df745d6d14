/**
 * Why a platform call failed, in the terms delivery acts on:
 * - `recipient`     the recipient is malformed; found before any network call
 * - `rejected`      the platform refused for good (a 4xx: unknown chat, blocked bot, bad
 *                   credentials, text too long); the message carries the platform's reason
 * - `rate_limited`  the platform said slow down (429); `retryAfterMs` when it said how long,
 *                   `rateLimitScope` when it said the limit holds the whole account
 * - `unavailable`   5xx, timeout or network failure: the platform may work a moment later
 * - `unsupported`   the platform cannot do this at all (polls on Slack, an anonymous Discord poll)
 */
export type ChannelErrorKind = "recipient" | "rejected" | "rate_limited" | "unavailable" | "unsupported";

export const CHANNEL_ERROR_KINDS: readonly ChannelErrorKind[] = [
  "recipient",
  "rejected",
  "rate_limited",
  "unavailable",
  "unsupported",
];

const RETRYABLE: ReadonlySet<ChannelErrorKind> = new Set(["rate_limited", "unavailable"]);

/**
 * What a rate limit holds: `chat` the recipient (or the route) called, `account` every call of
 * the bot or number (Discord's global limit, a WhatsApp number's throughput).
 */
export type RateLimitScope = "chat" | "account";

export interface ChannelErrorOptions {
  /** The platform's HTTP status, when there was a response. */
  status?: number;
  /** The platform's own error code (Telegram error_code, Slack `error`, Discord `code`, ...). */
  platformCode?: string;
  /** Only for `rate_limited`: how long the platform asked to wait. */
  retryAfterMs?: number;
  /** Only for `rate_limited`: what the limit holds; unset means the chat. */
  rateLimitScope?: RateLimitScope;
  cause?: unknown;
}

/**
 * The only error a ChannelAdapter throws (besides AbortError). Its message must never carry a
 * credential: adapters build it from the platform's reason, not from URLs or headers.
 */
export class ChannelError extends Error {
  override readonly name = "ChannelError";
  readonly kind: ChannelErrorKind;
  /** Whether the same call may succeed later: `rate_limited` and `unavailable`. */
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly rateLimitScope: RateLimitScope | undefined;
  readonly status: number | undefined;
  readonly platformCode: string | undefined;

  constructor(kind: ChannelErrorKind, message: string, opts: ChannelErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    if (opts.retryAfterMs !== undefined) {
      if (kind !== "rate_limited") throw new Error(`retryAfterMs belongs to rate_limited, not ${kind}`);
      if (!Number.isFinite(opts.retryAfterMs) || opts.retryAfterMs < 0) {
        throw new Error(`retryAfterMs must be a non-negative number, got ${opts.retryAfterMs}`);
      }
    }
    if (opts.rateLimitScope !== undefined && kind !== "rate_limited") throw new Error(`rateLimitScope belongs to rate_limited, not ${kind}`);
    this.kind = kind;
    this.retryable = RETRYABLE.has(kind);
    this.retryAfterMs = opts.retryAfterMs;
    this.rateLimitScope = opts.rateLimitScope;
    this.status = opts.status;
    this.platformCode = opts.platformCode;
  }
}

export function isChannelError(err: unknown): err is ChannelError {
  return err instanceof ChannelError;
}
