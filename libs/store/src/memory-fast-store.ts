import { GatewayError } from "@gw/contracts";
import { ExpiringMap } from "./expiring-map.js";
import type {
  CounterStore,
  FastStore,
  IdempotencyStore,
  IdemState,
  LeaseStore,
  SetStore,
  ValueStore,
  WindowCount,
} from "./fast-store.js";
import { durationMs, increment } from "./fast-store-args.js";

export interface MemoryFastStoreOptions {
  /** Clock in epoch ms; tests inject one to move time without sleeping. */
  now?: () => number;
  /** How often expired entries nobody reads are dropped (default 1 000 ms). */
  sweepIntervalMs?: number;
}

type Claim = { status: "pending"; holder: string } | { status: "done"; result: string };

/** What a caller is told of a claim: its holder stays inside the store. */
const stateOf = (claim: Claim): IdemState => (claim.status === "done" ? { ...claim } : { status: "pending" });
type Guard = () => void;

function memoryIdempotency(claims: ExpiringMap<Claim>, open: Guard): IdempotencyStore {
  return {
    async begin(key, windowMs, holder = "") {
      open();
      const ttl = durationMs("windowMs", windowMs);
      const existing = claims.get(key);
      if (existing !== undefined) return stateOf(existing);
      claims.set(key, { status: "pending", holder }, ttl);
      return { status: "new" };
    },
    async complete(key, result, windowMs) {
      open();
      claims.set(key, { status: "done", result }, durationMs("windowMs", windowMs));
    },
    async lookup(key): Promise<IdemState> {
      open();
      const existing = claims.get(key);
      return existing === undefined ? { status: "new" } : stateOf(existing);
    },
    async abandon(key, holder = "") {
      open();
      const existing = claims.get(key);
      if (existing?.status === "pending" && existing.holder === holder) claims.delete(key);
    },
    async extend(key, windowMs, holder = "") {
      open();
      const ttl = durationMs("windowMs", windowMs);
      const existing = claims.get(key);
      if (existing?.status !== "pending" || existing.holder !== holder) return false;
      claims.set(key, existing, ttl);
      return true;
    },
  };
}

function windowOf(counts: ExpiringMap<number>, key: string): WindowCount {
  const count = counts.get(key);
  const ttl = counts.ttl(key);
  if (count === undefined || ttl === undefined) return { count: 0, resetInMs: 0 };
  return { count, resetInMs: Math.max(0, Math.ceil(ttl)) };
}

function memoryCounters(counts: ExpiringMap<number>, open: Guard): CounterStore {
  return {
    async hit(key, windowMs, by) {
      open();
      const ttl = durationMs("windowMs", windowMs);
      const step = increment(by);
      const current = counts.get(key);
      if (current === undefined) counts.set(key, step, ttl);
      else counts.replace(key, current + step);
      return windowOf(counts, key);
    },
    async giveBack(key, by) {
      open();
      const step = increment(by);
      const current = counts.get(key);
      if (current !== undefined && current >= step) {
        if (current === step) counts.delete(key);
        else counts.replace(key, current - step);
      }
      return windowOf(counts, key);
    },
    async peek(key) {
      open();
      return windowOf(counts, key);
    },
    async reset(key) {
      open();
      counts.delete(key);
    },
  };
}

function memorySets(sets: ExpiringMap<Set<string>>, open: Guard): SetStore {
  return {
    async add(key, member, ttlMs) {
      open();
      const ttl = durationMs("ttlMs", ttlMs);
      const members = sets.get(key) ?? new Set<string>();
      members.add(member);
      sets.set(key, members, ttl);
    },
    async remove(key, member) {
      open();
      const members = sets.get(key);
      if (members === undefined) return;
      members.delete(member);
      // Redis drops a set with its last member; match it so TTL and existence agree.
      if (members.size === 0) sets.delete(key);
    },
    async members(key) {
      open();
      return [...(sets.get(key) ?? [])];
    },
  };
}

function memoryValues(values: ExpiringMap<string>, open: Guard): ValueStore {
  return {
    async set(key, value, opts = {}) {
      open();
      const ttl = opts.ttlMs === undefined ? undefined : durationMs("ttlMs", opts.ttlMs);
      if (opts.ifAbsent === true && values.get(key) !== undefined) return false;
      values.set(key, value, ttl);
      return true;
    },
    async get(key) {
      open();
      return values.get(key) ?? null;
    },
    async delete(key) {
      open();
      values.delete(key);
    },
    async getMany(keys) {
      open();
      return keys.map((key) => values.get(key) ?? null);
    },
    async writeAll(writes) {
      open();
      const ttls = writes.map((w) => (w.ttlMs === undefined ? undefined : durationMs("ttlMs", w.ttlMs)));
      writes.forEach((w, i) => {
        if (w.value === null) values.delete(w.key);
        else values.set(w.key, w.value, ttls[i]);
      });
    },
  };
}

function memoryLeases(leases: ExpiringMap<string>, open: Guard): LeaseStore {
  return {
    async acquire(key, holder, ttlMs) {
      open();
      const ttl = durationMs("ttlMs", ttlMs);
      const current = leases.get(key);
      if (current !== undefined && current !== holder) return false;
      leases.set(key, holder, ttl);
      return true;
    },
    async renew(key, holder, ttlMs) {
      open();
      const ttl = durationMs("ttlMs", ttlMs);
      if (leases.get(key) !== holder) return false;
      leases.set(key, holder, ttl);
      return true;
    },
    async release(key, holder) {
      open();
      if (leases.get(key) === holder) leases.delete(key);
    },
    async holder(key) {
      open();
      return leases.get(key) ?? null;
    },
  };
}

/** The embedded-mode FastStore: one process, so plain maps are atomic by construction. */
export function createMemoryFastStore(opts: MemoryFastStoreOptions = {}): FastStore {
  const now = opts.now ?? Date.now;
  const claims = new ExpiringMap<Claim>(now);
  const counts = new ExpiringMap<number>(now);
  const sets = new ExpiringMap<Set<string>>(now);
  const values = new ExpiringMap<string>(now);
  const leases = new ExpiringMap<string>(now);
  const maps = [claims, counts, sets, values, leases];
  let closed = false;
  const open = () => {
    if (closed) throw new GatewayError("UNAVAILABLE", "the fast store is closed");
  };

  const sweeper = setInterval(() => {
    for (const map of maps) map.sweep();
  }, opts.sweepIntervalMs ?? 1_000);
  sweeper.unref();

  return {
    idempotency: memoryIdempotency(claims, open),
    counters: memoryCounters(counts, open),
    sets: memorySets(sets, open),
    values: memoryValues(values, open),
    leases: memoryLeases(leases, open),
    isHealthy: () => !closed,
    async close() {
      closed = true;
      clearInterval(sweeper);
      for (const map of maps) map.clear();
    },
  };
}
