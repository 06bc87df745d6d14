import { connectNats } from "@gw/bus";
import { createLogger } from "@gw/runtime";
import { createJetStreamDurableStore, createRedisFastStore, type DurableStore, type FastStore } from "@gw/store";
import { type NatsServerHandle, type RedisServerHandle, startNats, startRedis, waitUntil } from "@gw/testing";
import type { NatsConnection } from "@nats-io/nats-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MemorySink, MessageLog, receiverDirectory } from "../../../test/memory-receiver.js";
import { receiverKey } from "./account-receiver.js";
import { FencedOut, ReceiverCursors } from "./receiver-cursors.js";
import { type Receivers, startReceivers } from "./receivers.js";

const logger = createLogger({ service: "test", level: "silent" });
const TIMING = { ttlMs: 1_500, renewEveryMs: 400, acquireEveryMs: 200, backoffBaseMs: 50, backoffMaxMs: 200, healthyAfterMs: 60_000 };
const KEY = receiverKey({ channelId: "tg", accountId: "default" });

let nats: NatsServerHandle;
let redis: RedisServerHandle;
beforeAll(async () => {
  [nats, redis] = await Promise.all([startNats(), startRedis()]);
});
afterAll(async () => {
  await Promise.all([nats?.stop(), redis?.stop()]);
});

/** One delivery replica's own connections, as a separate process would have them. */
interface Replica {
  fast: FastStore;
  nc: NatsConnection;
  durable: DurableStore;
  receivers?: Receivers;
}

describe("inbound receivers on Redis and JetStream", () => {
  const replicas: Replica[] = [];
  let prefix: string;

  async function replica(id: string, log: MessageLog, sink: MemorySink): Promise<Replica> {
    const fast = await createRedisFastStore({ url: redis.url, keyPrefix: `${prefix}:` });
    const nc = await connectNats({ url: nats.url });
    const durable = createJetStreamDurableStore(nc, { bucketPrefix: `${prefix}_` });
    const r: Replica = { fast, nc, durable };
    r.receivers = await startReceivers({ directory: receiverDirectory({ tg: log }), sink, fastStore: fast, durable, logger, replicaId: id, timing: TIMING });
    replicas.push(r);
    return r;
  }

  /** Like kill -9 for the stores: connections cut, nothing released, no stop(). */
  async function crash(r: Replica): Promise<void> {
    await r.fast.close();
    await r.nc.close();
  }

  afterEach(async () => {
    for (const r of replicas.splice(0)) {
      await r.receivers?.stop();
      await r.fast.close();
      if (!r.nc.isClosed()) await r.nc.close();
    }
  });

  it("keeps one reader across two replicas, and the survivor takes over within the lease TTL without replaying", async () => {
    prefix = `int${Date.now()}`;
    const log = new MessageLog();
    const sink = new MemorySink();
    const a = await replica("a", log, sink);
    await waitUntil(async () => (await a.fast.leases.holder(KEY)) !== null, { what: "a holds the lease", timeoutMs: 10_000 });
    const b = await replica("b", log, sink);
    for (let i = 0; i < 20; i++) log.write(`m${i}`);
    await waitUntil(() => sink.accepted.length === 20, { what: "twenty stored", timeoutMs: 10_000 });
    expect(log.maxActive).toBe(1);
    expect(log.startedFrom).toEqual([undefined]);

    const crashedAt = Date.now();
    await crash(a);
    await waitUntil(() => log.startedFrom.length === 2, { what: "b took over", timeoutMs: TIMING.ttlMs + 5_000 });
    const takeover = Date.now() - crashedAt;
    expect(takeover).toBeLessThan(TIMING.ttlMs + TIMING.acquireEveryMs * 1.5 + 2_000);
    expect(log.startedFrom[1]).toBe("20");
    expect(await b.fast.leases.holder(KEY)).toMatch(/^b:/);

    for (let i = 20; i < 25; i++) log.write(`m${i}`);
    await waitUntil(() => sink.accepted.length === 25, { what: "five more stored", timeoutMs: 10_000 });
    expect(sink.eventIds()).toEqual(log.messages.map((m) => m.eventId));
    // The crashed replica gave up reading before its lease could lapse: never two readers.
    expect(log.maxActive).toBe(1);
  });

  it("fences a holder that lost its lease: its cursor writes are refused by JetStream's compare-and-set", async () => {
    prefix = `fence${Date.now()}`;
    const nc = await connectNats({ url: nats.url });
    const durable = createJetStreamDurableStore(nc, { bucketPrefix: `${prefix}_` });
    try {
      const cursors = await ReceiverCursors.open(durable);
      const old = await cursors.takeOver(KEY, "a:1");
      await cursors.advance(KEY, old.fence, "10");
      const next = await cursors.takeOver(KEY, "b:1");
      expect(next).toEqual({ fence: old.fence + 1, cursor: "10" });
      await expect(cursors.advance(KEY, old.fence, "12")).rejects.toBeInstanceOf(FencedOut);
      await cursors.advance(KEY, next.fence, "11");
      expect((await cursors.read(KEY))?.cursor).toBe("11");
    } finally {
      await nc.close();
    }
  });
});
