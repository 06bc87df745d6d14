import type { FastStore } from "@gw/store";

/**
 * Events whose turn is over (answered, or refused by the sender policy), remembered in the
 * FastStore for the idempotency window: a platform's late retry of such an event is not stored
 * again. Also each turn's answer between the end of its run and the end of its turn, so a turn
 * taken up again after a crash sends it without running the agent again. Redis in distributed
 * mode, so both outlive a delivery restart, as the run registry and the answer's idempotency key
 * beside them do; memory in embedded mode, where a restart of the whole gateway forgets them
 * (docs/decisions.md, Inbound).
 */
export class AnsweredEvents {
  constructor(
    private readonly store: FastStore,
    private readonly windowMs: number,
  ) {}

  private key(eventKey: string): string {
    return `delivery:inbound:done:${eventKey}`;
  }

  /** The agent's answer to the event, kept until its turn is over. */
  async keepAnswer(eventKey: string, text: string): Promise<void> {
    await this.store.values.set(`delivery:inbound:answer:${eventKey}`, text, { ttlMs: this.windowMs });
  }

  async answerOf(eventKey: string): Promise<string | undefined> {
    return (await this.store.values.get(`delivery:inbound:answer:${eventKey}`)) ?? undefined;
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

  /**
   * The turn is over: its events (one, or several collected) remembered as answered, the answer
   * kept under the turn's key (its run id) let go, in one round trip.
   */
  async mark(eventKeys: readonly string[], turnKey: string): Promise<void> {
    await this.store.values.writeAll([
      ...eventKeys.map((eventKey) => ({ key: this.key(eventKey), value: "1", ttlMs: this.windowMs })),
      { key: `delivery:inbound:answer:${turnKey}`, value: null },
    ]);
  }
}
