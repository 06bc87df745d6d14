import { GatewayError } from "@gw/contracts";

/**
 * The store's writes under way, for a clean close: `settled` waits for them, and `unsure` tells
 * whether one failed in a way that may leave files the slots do not describe (a half record, an
 * orphan log), after which the next start must scan and recover them rather than trust a snapshot.
 */
export class WriteTracker {
  private readonly pending = new Set<Promise<unknown>>();
  private failedUntyped = false;

  get unsure(): boolean {
    return this.failedUntyped;
  }

  /** Counts `work` as under way until it settles; a failure other than a typed refusal makes the store unsure. */
  track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    return work.then(
      (value) => {
        this.pending.delete(work);
        return value;
      },
      (err: unknown) => {
        this.pending.delete(work);
        if (!(err instanceof GatewayError)) this.failedUntyped = true;
        throw err;
      },
    );
  }

  /** Resolves once nothing is under way, including work started while waiting. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
