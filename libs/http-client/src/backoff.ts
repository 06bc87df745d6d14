import { retryDelay, sleep } from "@gw/runtime";
import { HttpError } from "./http-error.js";

export interface RetryPolicy {
  /** Attempts in total, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** 0..1, injected in tests. */
  random?: () => number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 250, maxDelayMs: 8_000 };

/** A server's Retry-After is honoured up to this multiple of `maxDelayMs`. */
const RETRY_AFTER_CAP_FACTOR = 4;

/**
 * Full jitter over an exponential ceiling (`attempt` counts from 0 for the first retry: the
 * shared policy, @gw/runtime's retryDelay); a server's Retry-After wins when it asks for longer,
 * up to four times `maxDelayMs`.
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number {
  const jittered = retryDelay(attempt, { baseMs: policy.baseDelayMs, capMs: policy.maxDelayMs, jitter: "full", random: policy.random });
  if (retryAfterMs === undefined) return jittered;
  return Math.min(policy.maxDelayMs * RETRY_AFTER_CAP_FACTOR, Math.max(jittered, retryAfterMs));
}

export interface RetryOptions extends RetryPolicy {
  signal?: AbortSignal;
  /** Which failures to try again; by default an HttpError marked retryable. */
  retryable?: (err: unknown) => boolean;
  /** Told before each wait, for logs and metrics. */
  onRetry?: (info: { err: unknown; attempt: number; delayMs: number }) => void;
}

function defaultRetryable(err: unknown): boolean {
  return err instanceof HttpError && err.retryable;
}

function retryAfterOf(err: unknown): number | undefined {
  return err instanceof HttpError ? err.retryAfterMs : undefined;
}

/**
 * Calls `fn` until it succeeds, a failure is not retryable, the attempts run out or the signal
 * fires; the last failure is thrown as it was, so callers still see its status and
 * retryAfterMs. A server that asks to wait longer than the cap (four times `maxDelayMs`) is not
 * retried early, since it would only refuse again: its error is thrown at once for the caller
 * (an outbox, a scheduler) to reschedule.
 */
export async function retryWithBackoff<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const retryable = opts.retryable ?? defaultRetryable;
  for (let attempt = 0; ; attempt++) {
    opts.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      const retryAfterMs = retryAfterOf(err);
      const tooLong = retryAfterMs !== undefined && retryAfterMs > opts.maxDelayMs * RETRY_AFTER_CAP_FACTOR;
      if (opts.signal?.aborted || attempt + 1 >= opts.attempts || tooLong || !retryable(err)) throw err;
      const delayMs = retryDelayMs(opts, attempt, retryAfterMs);
      opts.onRetry?.({ err, attempt, delayMs });
      await sleep(delayMs, opts.signal);
    }
  }
}
