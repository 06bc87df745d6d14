import { ChannelError, isChannelError } from "@gw/channels";
import { type BackoffPolicy, retryDelay, sleep } from "@gw/runtime";
import { type PaceTarget, type Pacer } from "./pacer.js";
import type { StatusBook } from "../status-book.js";
import type { ChannelAccount } from "../channel-directory.js";
import { deadline as deadlineOf } from "./deadline.js";

export interface PlatformCallDeps {
  pacer: Pacer;
  status: StatusBook;
  /** Calls per part: the first try and its retries. */
  maxAttempts: number;
  /** Deadline of one platform call. */
  callTimeoutMs: number;
  /** Backoff between retries of a 5xx or timeout: full jitter under min(cap, base * 2^n). */
  backoff?: { baseMs: number; capMs: number };
}

/** The error of a failed call, and how many calls were made. */
export class CallFailed extends Error {
  override readonly name = "CallFailed";
  constructor(
    readonly error: ChannelError,
    readonly attempts: number,
  ) {
    super(error.message, { cause: error });
  }
}

/** Between retries of a 5xx or timeout, unless the deps say otherwise. */
const DEFAULT_BACKOFF = { baseMs: 250, capMs: 10_000 };

/** Anything an adapter threw, as a ChannelError: an abort is a timeout, a bug stays a bug. */
function asChannelError(err: unknown, deadline: AbortSignal): ChannelError {
  if (isChannelError(err)) return err;
  if ((err as { name?: string } | undefined)?.name === "AbortError" || (err as { name?: string } | undefined)?.name === "TimeoutError") {
    return new ChannelError("unavailable", deadline.aborted ? "the send's deadline passed" : "the platform did not answer in time", {
      cause: err,
    });
  }
  throw err;
}

/**
 * One platform call with pacing and retries: wait for the account's and chat's turn (the first
 * wait on `cooldowns` read ahead by the caller, Pacer.prefetch), call,
 * and on a 429 (after its `retry_after`, which also cools every replica down), a 5xx, a
 * timeout or a network failure try again, up to `maxAttempts` and within the send's deadline.
 * A permanent refusal (4xx) is not retried. Success and failure are recorded for
 * channels.status.
 */
export async function callPlatform<T extends { cooldownMs?: number }>(
  deps: PlatformCallDeps,
  account: ChannelAccount,
  target: PaceTarget,
  deadline: AbortSignal,
  call: (signal: AbortSignal) => Promise<T>,
  cooldowns?: Promise<number | undefined>,
): Promise<T> {
  const backoff: BackoffPolicy = { ...(deps.backoff ?? DEFAULT_BACKOFF), jitter: "full" };
  for (let attempt = 1; ; attempt++) {
    await deps.pacer.turn(target, deadline, attempt === 1 ? cooldowns : undefined);
    const callDeadline = deadlineOf(deps.callTimeoutMs, deadline);
    try {
      const result = await call(callDeadline.signal);
      deps.status.success(account.channelId, account.accountId);
      if (result.cooldownMs !== undefined) await deps.pacer.coolDown(target, result.cooldownMs, "chat");
      return result;
    } catch (err) {
      const error = asChannelError(err, deadline);
      let waitMs = retryDelay(attempt - 1, backoff);
      if (error.kind === "rate_limited") {
        waitMs = error.retryAfterMs ?? Math.max(1_000, waitMs);
        // An account-wide limit (Discord's global one, a WhatsApp number's throughput) holds every
        // chat of the account; calling other chats meanwhile only earns more 429s.
        await deps.pacer.coolDown(target, waitMs, error.rateLimitScope ?? "chat");
        deps.status.rateLimited(account.channelId, account.accountId, Date.now() + waitMs);
      }
      const giveUp = !error.retryable || attempt >= deps.maxAttempts || deadline.aborted;
      if (giveUp) {
        deps.status.failure(account.channelId, account.accountId, error.message);
        throw new CallFailed(error, attempt);
      }
      // A rate limit waits in the pacer (its cooldown); anything else backs off here.
      if (error.kind !== "rate_limited" && !(await sleep(waitMs, deadline).then(() => true, () => false))) {
        deps.status.failure(account.channelId, account.accountId, error.message);
        throw new CallFailed(error, attempt);
      }
    } finally {
      callDeadline.done();
    }
  }
}
