import type { LeaseStore } from "@gw/store";

export interface LeaseTiming {
  /** How long the lease outlives its holder's last renewal: the takeover time after a crash. */
  ttlMs: number;
  /** How often the holder renews (a third of the TTL leaves two tries before it lapses). */
  renewEveryMs: number;
}

/**
 * A lease this process holds, renewed on a timer until released. `lost` fires as soon as the
 * lease is known to be gone: another holder has it, or no renewal has succeeded for a whole TTL
 * (Redis away: the lease has lapsed by then, and someone may hold it). `held()` is the local
 * check before a cursor write; the cursor's fence is the check that cannot race.
 */
export class HeldLease {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
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
  }

  get lost(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the lease is still ours by our own clock, with a renewal period to spare. */
  held(): boolean {
    return !this.controller.signal.aborted && this.now() - this.renewedAt < this.timing.ttlMs - this.timing.renewEveryMs;
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.controller.signal.aborted) return;
    this.renewing = true;
    const sentAt = this.now();
    try {
      if (await this.leases.renew(this.key, this.holder, this.timing.ttlMs)) this.renewedAt = sentAt;
      else this.lose(new Error(`the lease ${this.key} was taken by another holder`));
    } catch (err) {
      if (this.now() - this.renewedAt >= this.timing.ttlMs) {
        this.lose(new Error(`the lease ${this.key} could not be renewed for ${this.timing.ttlMs} ms`, { cause: err }));
      }
    } finally {
      this.renewing = false;
    }
  }

  private lose(reason: Error): void {
    clearInterval(this.timer);
    this.controller.abort(reason);
  }

  /** Stops renewing and gives the lease up (best effort: an unreleased lease lapses by itself). */
  async release(): Promise<void> {
    const held = !this.controller.signal.aborted;
    this.lose(new Error(`the lease ${this.key} was released`));
    if (held) await this.leases.release(this.key, this.holder).catch(() => undefined);
  }
}
