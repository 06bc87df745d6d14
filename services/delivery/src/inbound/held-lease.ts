import type { LeaseStore } from "@gw/store";

export interface LeaseTiming {
  /** How long the lease outlives its holder's last renewal: the takeover time after a crash. */
  ttlMs: number;
  /** How often the holder renews (a third of the TTL leaves two tries before it lapses). */
  renewEveryMs: number;
}

/**
 * A lease this process holds, renewed on a timer until released. `lost` fires as soon as the
 * lease is known or feared to be gone: another holder has it, or no renewal has succeeded and
 * the lease would lapse within half a renewal period (Redis away, or this process too slow).
 * Giving up before the lapse, not at it, means the holder has stopped reading before any other
 * replica can take the lease. `held()` is the local check before a cursor write; the cursor's
 * fence is the check that cannot race.
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
    this.timer = setInterval(() => void this.renew(), timing.renewEveryMs);
    this.timer.unref();
    this.armDeadline();
  }

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
