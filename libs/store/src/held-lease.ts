import type { LeaseStore } from "./fast-store.js";

export interface LeaseTiming {
  /** How long the lease outlives its holder's last renewal: the takeover time after a crash. */
  ttlMs: number;
  /** How often the holder renews (a third of the TTL leaves two tries before it lapses). */
  renewEveryMs: number;
}

/** The usual timing for a TTL: renewed every third of it (at least every 10 ms). */
export function leaseTiming(ttlMs: number): LeaseTiming {
  return { ttlMs, renewEveryMs: Math.max(10, ttlMs / 3) };
}

/**
 * A lease this process holds, renewed on a timer until released. `lost` fires as soon as the
 * lease is known or feared to be gone: another holder has it, or no renewal has succeeded and
 * the lease would lapse within half a renewal period (the store away, or this process too slow).
 * Giving up before the lapse, not at it, means the holder has stopped before any other replica
 * can take the lease. `held()` is the local check before an effect; a fence or a revision on the
 * effect itself is the check that cannot race. Renewal and release go through the LeaseStore's
 * holder-checked operations, so a holder that lost the lease never extends or frees another's.
 */
export class HeldLease {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private deadline: NodeJS.Timeout | undefined;
  /** When the last successful renewal was sent (not answered): the lease runs from then. */
  private renewedAt: number;
  private renewing = false;

  constructor(
    private readonly leases: LeaseStore,
    readonly key: string,
    readonly holder: string,
    private readonly timing: LeaseTiming,
    acquiredAt: number,
    private readonly now: () => number = Date.now,
  ) {
    this.renewedAt = acquiredAt;
    // renew() never rejects; the catch only keeps a bug there from becoming an unhandled rejection.
    this.timer = setInterval(() => {
      this.renew().catch(() => undefined);
    }, timing.renewEveryMs);
    this.timer.unref();
    this.armDeadline();
  }

  /** Aborts when the lease is lost (or released): the holder's work stops on it. */
  get lost(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the lease is still ours by our own clock, with a margin before it could lapse. */
  held(): boolean {
    return !this.controller.signal.aborted && this.now() < this.giveUpAt();
  }

  private giveUpAt(): number {
    return this.renewedAt + this.timing.ttlMs - this.timing.renewEveryMs / 2;
  }

  private armDeadline(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(
      () => this.lose(new Error(`the lease ${this.key} could not be renewed in time; giving it up before it lapses`)),
      Math.max(0, this.giveUpAt() - this.now()),
    );
    this.deadline.unref();
  }

  /** Never rejects: a failed renewal leaves the deadline to give the lease up. */
  private async renew(): Promise<void> {
    if (this.renewing || this.controller.signal.aborted) return;
    this.renewing = true;
    const sentAt = this.now();
    try {
      if (await this.leases.renew(this.key, this.holder, this.timing.ttlMs)) {
        this.renewedAt = sentAt;
        if (!this.controller.signal.aborted) this.armDeadline();
      } else {
        this.lose(new Error(`the lease ${this.key} was taken by another holder`));
      }
    } catch {
      // The deadline gives the lease up if no renewal succeeds in time.
    } finally {
      this.renewing = false;
    }
  }

  private lose(reason: Error): void {
    clearInterval(this.timer);
    clearTimeout(this.deadline);
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Stops renewing and gives the lease up (best effort: an unreleased lease lapses by itself). */
  async release(): Promise<void> {
    const held = !this.controller.signal.aborted;
    this.lose(new Error(`the lease ${this.key} was released`));
    if (held) await this.leases.release(this.key, this.holder).catch(() => undefined);
  }
}

/** What `withLease` did: `held: false` when another holder had the lease and `work` never ran. */
export type LeaseOutcome<T> = { held: false } | { held: true; value: T };

/**
 * Runs `work` while holding the lease `key` as `holder`: takes it (or returns `held: false` at
 * once when someone else holds it), renews it for as long as `work` runs, and releases it after,
 * whether `work` succeeded or threw. `work` must stop its effects once `lease.lost` aborts (or
 * check `lease.held()` before each): the lease was taken by another holder or could not be
 * renewed in time. `holder` names one tenure (a fresh id per call), not a process, so a
 * restarted process never mistakes its predecessor's lease for its own. A store failure while
 * taking the lease rejects.
 */
export async function withLease<T>(
  leases: LeaseStore,
  key: string,
  holder: string,
  timing: LeaseTiming,
  work: (lease: HeldLease) => Promise<T>,
): Promise<LeaseOutcome<T>> {
  const acquiredAt = Date.now();
  if (!(await leases.acquire(key, holder, timing.ttlMs))) return { held: false };
  const lease = new HeldLease(leases, key, holder, timing, acquiredAt);
  try {
    return { held: true, value: await work(lease) };
  } finally {
    await lease.release();
  }
}
