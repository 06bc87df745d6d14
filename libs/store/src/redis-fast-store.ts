import { GatewayError } from "@gw/contracts";
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
import { groupBySlot } from "./key-slot.js";
import { connectRedis, isCluster, type RedisClient, type RedisErrorSink } from "./redis-connect.js";
import {
  COUNTER_GIVE_BACK,
  COUNTER_HIT,
  COUNTER_PEEK,
  IDEM_ABANDON,
  IDEM_BEGIN,
  IDEM_EXTEND,
  LEASE_ACQUIRE,
  LEASE_RELEASE,
  LEASE_RENEW,
  runScript,
} from "./redis-scripts.js";

export interface RedisFastStoreOptions {
  url: string;
  /** Seed nodes of a Redis Cluster (redis.nodes); empty or absent: one server at `url`. */
  nodes?: readonly string[];
  /** Prepended to every key so several deployments can share one Redis (default "gw:"). */
  keyPrefix?: string;
  /** How long the first connection may take before this rejects (default 5 000 ms). */
  connectTimeoutMs?: number;
  /** Told of every Redis failure (for the service's error metrics and logs). */
  onError?: RedisErrorSink;
  /** One write per connection for the commands of one event-loop turn (RedisConnectOptions). */
  coalesceWrites?: boolean;
}

/** What each sub-store needs: the client, the key namer, the error guard and the error sink. */
interface Ctx {
  client: RedisClient;
  /**
   * Splits a multi-key command's keys into groups it may send together: one group on a single
   * server, one per slot on a cluster (which refuses multi-key commands across slots).
   */
  groups(keys: readonly string[]): number[][];
  key(kind: "idem" | "ctr" | "set" | "val" | "lease", k: string): string;
  guard<T>(op: () => Promise<T>): Promise<T>;
  onError: RedisErrorSink | undefined;
}

function parseClaim(raw: unknown): IdemState {
  if (raw === "N" || raw === null || raw === undefined) return { status: "new" };
  const text = String(raw);
  if (text.startsWith("D")) return { status: "done", result: text.slice(1) };
  return { status: "pending" };
}

function parseWindow(raw: unknown): WindowCount {
  const [count, ttl] = raw as [number, number];
  if (count <= 0) return { count: 0, resetInMs: 0 };
  return { count, resetInMs: Math.max(0, ttl) };
}

/** Stored as "P<holder>" while pending and "D<result>" once done, so one GET tells both apart. */
function redisIdempotency({ client, key, guard }: Ctx): IdempotencyStore {
  return {
    async begin(k, windowMs, holder = "") {
      const ttl = durationMs("windowMs", windowMs);
      return guard(async () => parseClaim(await runScript(client, IDEM_BEGIN, [key("idem", k)], [ttl, holder])));
    },
    async complete(k, result, windowMs) {
      const ttl = durationMs("windowMs", windowMs);
      await guard(() => client.set(key("idem", k), `D${result}`, "PX", ttl));
    },
    lookup: (k) => guard(async () => parseClaim(await client.get(key("idem", k)))),
    async abandon(k, holder = "") {
      await guard(() => runScript(client, IDEM_ABANDON, [key("idem", k)], [holder]));
    },
    async extend(k, windowMs, holder = "") {
      const ttl = durationMs("windowMs", windowMs);
      return guard(async () => Number(await runScript(client, IDEM_EXTEND, [key("idem", k)], [ttl, holder])) === 1);
    },
  };
}

function redisCounters({ client, key, guard }: Ctx): CounterStore {
  return {
    async hit(k, windowMs, by) {
      const ttl = durationMs("windowMs", windowMs);
      const step = increment(by);
      return guard(async () =>
        parseWindow(await runScript(client, COUNTER_HIT, [key("ctr", k)], [ttl, step])),
      );
    },
    async giveBack(k, by) {
      const step = increment(by);
      return guard(async () => parseWindow(await runScript(client, COUNTER_GIVE_BACK, [key("ctr", k)], [step])));
    },
    peek: (k) => guard(async () => parseWindow(await runScript(client, COUNTER_PEEK, [key("ctr", k)], []))),
    async reset(k) {
      await guard(() => client.del(key("ctr", k)));
    },
  };
}

function redisSets({ client, key, guard }: Ctx): SetStore {
  return {
    async add(k, member, ttlMs) {
      const ttl = durationMs("ttlMs", ttlMs);
      await guard(async () => {
        const results = await client.multi().sadd(key("set", k), member).pexpire(key("set", k), ttl).exec();
        if (results === null) throw new Error("set add transaction was aborted");
        const failed = results.find(([err]) => err !== null);
        if (failed !== undefined) throw failed[0];
      });
    },
    async remove(k, member) {
      await guard(() => client.srem(key("set", k), member));
    },
    members: (k) => guard(() => client.smembers(key("set", k))),
  };
}

function redisValues({ client, key, guard, onError, groups }: Ctx): ValueStore {
  return {
    async set(k, value, opts = {}) {
      const args: (string | number)[] = [key("val", k), value];
      if (opts.ttlMs !== undefined) args.push("PX", durationMs("ttlMs", opts.ttlMs));
      if (opts.ifAbsent === true) args.push("NX");
      return guard(async () => (await client.call("SET", ...args)) !== null);
    },
    get: (k) => guard(() => client.get(key("val", k))),
    async delete(k) {
      await guard(() => client.del(key("val", k)));
    },
    async getMany(keys) {
      if (keys.length === 0) return [];
      const full = keys.map((k) => key("val", k));
      const found = new Array<string | null>(keys.length).fill(null);
      // One MGET per slot, all at once: atomic within a hash tag, one round trip either way.
      await guard(() =>
        Promise.all(
          groups(full).map(async (group) => {
            const values = await client.mget(group.map((i) => full[i]!));
            group.forEach((i, j) => (found[i] = values[j] ?? null));
          }),
        ),
      );
      return found;
    },
    async writeAll(writes) {
      if (writes.length === 0) return;
      const ttls = writes.map((w) => (w.ttlMs === undefined ? undefined : durationMs("ttlMs", w.ttlMs)));
      const full = writes.map((w) => key("val", w.key));
      // One pipeline per slot, each one write on its node's socket, sent now: in order with every
      // other command of this client to that slot (all of a single server's keys are one group).
      const results = await guard(() =>
        Promise.all(
          groups(full).map((group) => {
            const pipeline = client.pipeline();
            for (const i of group) {
              const [w, ttl] = [writes[i]!, ttls[i]];
              if (w.value === null) pipeline.del(full[i]!);
              else if (ttl === undefined) pipeline.set(full[i]!, w.value);
              else pipeline.set(full[i]!, w.value, "PX", ttl);
            }
            return pipeline.exec();
          }),
        ),
      );
      const failed = results.flatMap((r) => r ?? []).find(([err]) => err !== null);
      if (failed) {
        onError?.("command", failed[0]!);
        throw new GatewayError("INTERNAL", "the fast store failed a write", { cause: failed[0] });
      }
    },
  };
}

function redisLeases({ client, key, guard }: Ctx): LeaseStore {
  const run = async (script: string, k: string, args: (string | number)[]) =>
    guard(async () => Number(await runScript(client, script, [key("lease", k)], args)) === 1);
  return {
    async acquire(k, holder, ttlMs) {
      return run(LEASE_ACQUIRE, k, [holder, durationMs("ttlMs", ttlMs)]);
    },
    async renew(k, holder, ttlMs) {
      return run(LEASE_RENEW, k, [holder, durationMs("ttlMs", ttlMs)]);
    },
    async release(k, holder) {
      await run(LEASE_RELEASE, k, [holder]);
    },
    holder: (k) => guard(() => client.get(key("lease", k))),
  };
}

/**
 * The distributed FastStore: every replica sharing one Redis (or one Redis Cluster) sees the
 * same claims and counts. On a cluster, keys with one hash tag (`run:{id}`, `runhb:{id}`) share
 * a slot: multi-key reads of them are atomic and writes to them keep their order.
 */
export async function createRedisFastStore(opts: RedisFastStoreOptions): Promise<FastStore> {
  const client = await connectRedis(opts);
  const prefix = opts.keyPrefix ?? "gw:";
  let closed = false;

  /**
   * Backend failures become typed errors: UNAVAILABLE when Redis is away, INTERNAL otherwise.
   * Their messages are ours: ioredis's text ("Stream isn't writeable...") stays in the cause,
   * which reaches logs, never clients.
   */
  const guard = async <T>(op: () => Promise<T>): Promise<T> => {
    if (closed) throw new GatewayError("UNAVAILABLE", "the fast store is closed");
    try {
      return await op();
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      const error = err instanceof Error ? err : new Error(String(err));
      opts.onError?.("command", error);
      const away = client.status !== "ready" || /timed out|closed|writeable|offline/i.test(error.message);
      throw away
        ? new GatewayError("UNAVAILABLE", "the fast store (Redis) is unavailable; try again", { cause: err })
        : new GatewayError("INTERNAL", "the fast store (Redis) failed", { cause: err });
    }
  };
  const cluster = isCluster(client);
  const ctx: Ctx = {
    client,
    key: (kind, k) => `${prefix}${kind}:${k}`,
    groups: (keys) => (cluster ? groupBySlot(keys) : [keys.map((_, i) => i)]),
    guard,
    onError: opts.onError,
  };

  return {
    idempotency: redisIdempotency(ctx),
    counters: redisCounters(ctx),
    sets: redisSets(ctx),
    values: redisValues(ctx),
    leases: redisLeases(ctx),
    isHealthy: () => !closed && client.status === "ready",
    async close() {
      if (closed) return;
      closed = true;
      if (client.status === "ready") await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}
