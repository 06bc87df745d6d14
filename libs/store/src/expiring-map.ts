interface Slot<V> {
  value: V;
  /** Epoch ms; Infinity when the entry has no TTL. */
  expiresAt: number;
}

/** A Map whose entries vanish at their deadline: checked on every read, and by sweep(). */
export class ExpiringMap<V> {
  private readonly slots = new Map<string, Slot<V>>();

  constructor(private readonly now: () => number) {}

  get(key: string): V | undefined {
    return this.live(key)?.value;
  }

  /** Milliseconds left for `key`, undefined when absent, Infinity without TTL. */
  ttl(key: string): number | undefined {
    const slot = this.live(key);
    return slot === undefined ? undefined : slot.expiresAt - this.now();
  }

  set(key: string, value: V, ttlMs?: number): void {
    this.slots.set(key, {
      value,
      expiresAt: ttlMs === undefined ? Number.POSITIVE_INFINITY : this.now() + ttlMs,
    });
  }

  /** Replaces the value but keeps the deadline, as Redis does for INCRBY on a key with a TTL. */
  replace(key: string, value: V): void {
    const slot = this.live(key);
    if (slot !== undefined) slot.value = value;
  }

  delete(key: string): void {
    this.slots.delete(key);
  }

  /** Drops everything past its deadline, so keys nobody reads again do not pile up. */
  sweep(): void {
    const now = this.now();
    for (const [key, slot] of this.slots) {
      if (slot.expiresAt <= now) this.slots.delete(key);
    }
  }

  clear(): void {
    this.slots.clear();
  }

  get size(): number {
    return this.slots.size;
  }

  private live(key: string): Slot<V> | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    if (slot.expiresAt <= this.now()) {
      this.slots.delete(key);
      return undefined;
    }
    return slot;
  }
}
