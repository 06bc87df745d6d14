import type { FastStore } from "@gw/store";

/**
 * Events whose turn is over (answered, or refused by the sender policy), remembered in the
 * FastStore for the idempotency window: a platform's late retry of such an event is not stored
 * again. Redis in distributed mode, so it outlives a delivery restart; memory in embedded mode,
 * where a restart of the whole gateway forgets it (the answer's idempotency key, kept in the same
 * store, then no longer guards either: docs/decisions.md, Inbound).
 */
export class AnsweredEvents {
  constructor(
    private readonly store: FastStore,
    private readonly windowMs: number,
  ) {}

  private key(eventKey: string): string {
    return `delivery:inbound:done:${eventKey}`;
  }

  /** The event keys among `eventKeys` whose turn is over. */
  async which(eventKeys: readonly string[]): Promise<Set<string>> {
    if (eventKeys.length === 0) return new Set();
    const found = await this.store.values.getMany(eventKeys.map((k) => this.key(k)));
    return new Set(eventKeys.filter((_, i) => found[i] !== null && found[i] !== undefined));
  }

  async has(eventKey: string): Promise<boolean> {
    return (await this.store.values.get(this.key(eventKey))) !== null;
  }

  async mark(eventKey: string): Promise<void> {
    await this.store.values.set(this.key(eventKey), "1", { ttlMs: this.windowMs });
  }
}
