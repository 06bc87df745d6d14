import type { RateRule } from "@gw/channels";
import { sleep } from "@gw/runtime";
import type { FastStore } from "@gw/store";

/** What one platform call is paced by: its rules and the keys its counts live under. */
export interface PaceTarget {
  /** `<channel>:<account>`: the bot or number. */
  account: string;
  /** The normalised recipient. */
  chat: string;
  rules: readonly RateRule[];
}

export interface PacerOptions {
  /** Waits sleep in steps of at most this long, so a deadline is noticed. */
  maxStepMs?: number;
}

/** Aborted while waiting for a turn: the send's deadline passed. */
export class PaceAborted extends Error {
  override readonly name = "PaceAborted";
}

/** Waits `ms`, or rejects with PaceAborted once the send's deadline passes. */
function waitBefore(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, signal).catch(() => {
    throw new PaceAborted("deadline passed while waiting for a rate-limit turn");
  });
}

/**
 * Shared platform rate limits (each plugin's `rates`) and cooldowns (a platform's 429 `retry_after`,
 * Discord's exhausted route buckets), counted in the FastStore so every delivery replica
 * paces one bot together. `turn()` resolves when a call may go out now.
 *
 * A fixed window that the first hit starts spaces calls at least `windowMs / max` apart on
 * average and never lets more than `max` through one window; a refused hit waits for the
 * window to end and tries again. Callers keep their own order per chat (delivery serialises
 * each chat in process), so waiting here never reorders one chat's messages.
 */
export class Pacer {
  private readonly maxStepMs: number;

  constructor(
    private readonly store: FastStore,
    opts: PacerOptions = {},
  ) {
    this.maxStepMs = opts.maxStepMs ?? 5_000;
  }

  private cooldownKeys(target: PaceTarget): string[] {
    return [`pace:cool:${target.account}`, `pace:cool:${target.account}:${target.chat}`];
  }

  /**
   * Starts reading `target`'s cooldowns for a `turn()` soon after: read in the same event-loop
   * turn as a send's idempotency claim, the read shares the claim's Redis write and round trip.
   * Resolves undefined when the read fails (the turn then reads again).
   */
  prefetch(target: PaceTarget): Promise<number | undefined> {
    return this.cooldownUntil(target).catch(() => undefined);
  }

  /** Resolves when a call to `target` may go out now; `prefetched` stands in for its first cooldown read. */
  async turn(target: PaceTarget, signal: AbortSignal, prefetched?: Promise<number | undefined>): Promise<void> {
    for (let first = prefetched; ; first = undefined) {
      const until = (first === undefined ? undefined : await first) ?? (await this.cooldownUntil(target));
      const waitMs = Math.max(0, until - Date.now());
      if (waitMs > 0) {
        await waitBefore(Math.min(waitMs, this.maxStepMs), signal);
        continue;
      }
      const blockedMs = await this.hitAll(target);
      if (blockedMs === 0) return;
      await waitBefore(Math.min(blockedMs, this.maxStepMs), signal);
    }
  }

  /** Milliseconds until every cooldown on the target has passed (0: none). */
  async cooldownLeft(target: PaceTarget): Promise<number> {
    return Math.max(0, (await this.cooldownUntil(target)) - Date.now());
  }

  /** When the last cooldown on the target ends (epoch ms; 0: none). */
  private async cooldownUntil(target: PaceTarget): Promise<number> {
    const untils = await this.store.values.getMany(this.cooldownKeys(target));
    return Math.max(0, ...untils.map((until) => (until === null ? 0 : Number(until))));
  }

  /** Counts one call against every rule; the longest wait of a rule it broke, or 0. */
  private async hitAll(target: PaceTarget): Promise<number> {
    const counts = await Promise.all(
      target.rules.map((rule) => {
        const scope = rule.scope === "account" ? target.account : `${target.account}:${target.chat}`;
        return this.store.counters.hit(`pace:${rule.name}:${scope}`, rule.windowMs);
      }),
    );
    let wait = 0;
    counts.forEach(({ count, resetInMs }, i) => {
      if (count > target.rules[i]!.max) wait = Math.max(wait, Math.max(1, resetInMs));
    });
    return wait;
  }

  /**
   * The platform asked us to wait (`retry_after`): no call on this account (scope `account`)
   * or this chat (`chat`) goes out for `ms`, on any replica.
   */
  async coolDown(target: PaceTarget, ms: number, scope: "account" | "chat"): Promise<void> {
    if (!(ms > 0)) return;
    const [accountKey, chatKey] = this.cooldownKeys(target);
    const until = Date.now() + ms;
    await this.store.values.set(scope === "account" ? accountKey! : chatKey!, String(until), { ttlMs: ms });
  }
}
