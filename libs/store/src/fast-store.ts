/**
 * The port for shared, short-lived state (idempotency, rate counters, run fan-out). Redis backs
 * it in distributed mode, memory in embedded mode; both pass fast-store.contract.ts.
 */

export type IdemState = { status: "new" } | { status: "pending" } | { status: "done"; result: string };

/**
 * Claims name their holder (`holder`, optional: "" when absent) so that, as with leases, a
 * holder whose claim lapsed and was claimed again can neither extend nor abandon the new
 * holder's claim.
 */
export interface IdempotencyStore {
  /** Atomically claims `key` for `holder`: exactly one caller sees "new"; the claim lapses after `windowMs`. */
  begin(key: string, windowMs: number, holder?: string): Promise<IdemState>;
  /** Records the result of a claimed key; it stays visible for `windowMs`. */
  complete(key: string, result: string, windowMs: number): Promise<void>;
  /** "new" means the key is unknown (never claimed, or expired). */
  lookup(key: string): Promise<IdemState>;
  /** Drops `holder`'s pending claim after a failure so a retry can begin again; completed keys and others' claims stay. */
  abandon(key: string, holder?: string): Promise<void>;
  /**
   * A live holder's heartbeat: its pending claim lapses `windowMs` from now instead. Returns
   * false (and changes nothing) when the key is not pending for `holder` (done, abandoned,
   * lapsed, or claimed again by another).
   */
  extend(key: string, windowMs: number, holder?: string): Promise<boolean>;
}

export interface WindowCount {
  count: number;
  /** Milliseconds until the window ends; 0 when the count is 0. */
  resetInMs: number;
}

export interface CounterStore {
  /** Adds `by` (default 1) within a fixed window that the first hit starts. */
  hit(key: string, windowMs: number, by?: number): Promise<WindowCount>;
  /**
   * Takes `by` (default 1) back off the window's count when the count holds that much, else
   * changes nothing (a give-back that comes after its window ended never drives a fresh count
   * below zero). The key goes at 0. Returns the count as it then stands.
   */
  giveBack(key: string, by?: number): Promise<WindowCount>;
  peek(key: string): Promise<WindowCount>;
  reset(key: string): Promise<void>;
}

export interface SetStore {
  /** Adds a member; the TTL applies to the whole set and is refreshed by every add. */
  add(key: string, member: string, ttlMs: number): Promise<void>;
  remove(key: string, member: string): Promise<void>;
  members(key: string): Promise<string[]>;
}

export interface ValueSetOptions {
  ttlMs?: number;
  /** Only write when the key holds no value; set() then returns false if it did. */
  ifAbsent?: boolean;
}

/** One write of `ValueStore.writeAll`: a value to set (with an optional TTL), or null to delete. */
export interface ValueWrite {
  key: string;
  value: string | null;
  ttlMs?: number;
}

export interface ValueStore {
  /** Returns whether the value was written. */
  set(key: string, value: string, opts?: ValueSetOptions): Promise<boolean>;
  get(key: string): Promise<string | null>;
  delete(key: string): Promise<void>;
  /** Several values in one round trip, in the order of `keys` (null where absent). */
  getMany(keys: string[]): Promise<Array<string | null>>;
  /** Several writes in one round trip, applied in order (each on its own, not as a transaction). */
  writeAll(writes: ValueWrite[]): Promise<void>;
}

/**
 * Exclusive, expiring ownership of a name (one poller per bot across replicas). A lease is held
 * by one `holder` string until it is released or its TTL passes without a renewal; every
 * operation compares the holder atomically, so a holder whose lease lapsed and was taken can
 * neither renew nor release the new holder's lease.
 */
export interface LeaseStore {
  /** Takes the lease when nobody holds it (or `holder` already does: then it is renewed). */
  acquire(key: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Extends the lease to `ttlMs` from now; false (and nothing changed) when `holder` lost it. */
  renew(key: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` still has it; otherwise does nothing. */
  release(key: string, holder: string): Promise<void>;
  /** Who holds the lease now, or null. */
  holder(key: string): Promise<string | null>;
}

/**
 * Value writes (values.set / values.delete / values.writeAll) one process issues are applied in
 * that order, awaited or not, among keys of one hash tag: on a Redis Cluster, keys sharing a
 * `{...}` part share a slot, and only those keep their order and are read atomically by getMany.
 * Callers that need either give the keys one tag (the run registry: `run:{<runId>}`).
 */
export interface FastStore {
  readonly idempotency: IdempotencyStore;
  readonly counters: CounterStore;
  readonly sets: SetStore;
  readonly values: ValueStore;
  readonly leases: LeaseStore;
  /** True while the backend can serve requests (Redis: connection "ready"; memory: until closed). */
  isHealthy(): boolean;
  close(): Promise<void>;
}
