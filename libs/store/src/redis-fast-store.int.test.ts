import { freePort, type RedisServerHandle, startRedis, waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGatewayError, uniqueName } from "./contract-helpers.js";
import { describeFastStoreContract } from "./fast-store.contract.js";
import { describeHeldLeaseContract } from "./held-lease.contract.js";
import { createRedisFastStore } from "./redis-fast-store.js";

let redis: RedisServerHandle;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describeFastStoreContract("redis", () =>
  createRedisFastStore({ url: redis.url, keyPrefix: `${uniqueName("t")}:` }),
);

// The delivery service's connection: each turn's commands leave in one write.
describeFastStoreContract("redis, writes coalesced per turn", () =>
  createRedisFastStore({ url: redis.url, keyPrefix: `${uniqueName("t")}:`, coalesceWrites: true }),
);

// Two replicas: two connections to one Redis, one key prefix.
describeHeldLeaseContract("two clients of one redis", async () => {
  const keyPrefix = `${uniqueName("t")}:`;
  return [await createRedisFastStore({ url: redis.url, keyPrefix }), await createRedisFastStore({ url: redis.url, keyPrefix })];
});

describe("redis FastStore across processes", () => {
  it("shares counters, claims and sets between two stores on one Redis", async () => {
    const keyPrefix = `${uniqueName("shared")}:`;
    const a = await createRedisFastStore({ url: redis.url, keyPrefix });
    const b = await createRedisFastStore({ url: redis.url, keyPrefix });
    try {
      await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).counters.hit("ip:10.0.0.1", 10_000)),
      );
      expect((await a.counters.peek("ip:10.0.0.1")).count).toBe(30);
      expect((await b.counters.peek("ip:10.0.0.1")).count).toBe(30);

      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).idempotency.begin("send:1", 10_000)),
      );
      expect(claims.filter((c) => c.status === "new")).toHaveLength(1);

      await a.sets.add("run:1", "edge-a", 10_000);
      await b.sets.add("run:1", "edge-b", 10_000);
      expect((await a.sets.members("run:1")).sort()).toEqual(["edge-a", "edge-b"]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("keeps deployments with different key prefixes apart", async () => {
    const a = await createRedisFastStore({ url: redis.url, keyPrefix: `${uniqueName("a")}:` });
    const b = await createRedisFastStore({ url: redis.url, keyPrefix: `${uniqueName("b")}:` });
    try {
      await a.values.set("k", "from a");
      expect(await b.values.get("k")).toBeNull();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("redis FastStore connection handling", () => {
  it("rejects with a clear message when Redis cannot be reached in time", async () => {
    const port = await freePort();
    const started = Date.now();
    await expect(
      createRedisFastStore({ url: `redis://user:secret@127.0.0.1:${port}`, connectTimeoutMs: 300 }),
    ).rejects.toThrow(
      new RegExp(`cannot connect to Redis at redis://user:\\*\\*\\*@127.0.0.1:${port}/? within 300 ms`),
    );
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it.each([false, true])("turns unhealthy while Redis is down, fails fast, and recovers when it is back (coalesced writes: %s)", async (coalesceWrites) => {
    const own = await startRedis();
    const errors: Array<{ kind: string; message: string }> = [];
    const store = await createRedisFastStore({
      url: own.url,
      onError: (kind, err) => errors.push({ kind, message: err.message }),
      coalesceWrites,
    });
    try {
      await store.values.set("k", "v");
      expect(store.isHealthy()).toBe(true);

      await own.kill();
      await waitFor(() => (store.isHealthy() ? undefined : true), { what: "isHealthy() to turn false" });
      const started = Date.now();
      await expectGatewayError(store.values.get("k"), "UNAVAILABLE");
      expect(Date.now() - started).toBeLessThan(1_000);
      // The caller's message is ours; what ioredis said reaches only the error sink (and logs).
      const failure = await store.values.get("k").catch((err: Error) => err);
      expect((failure as Error).message).toBe("the fast store (Redis) is unavailable; try again");
      expect(errors).toContainEqual({ kind: "command", message: expect.stringMatching(/writeable/) });
      // ioredis keeps reconnecting; each failed attempt reaches the sink as a connection error.
      await waitFor(() => (errors.some((e) => e.kind === "connection") ? true : undefined), {
        timeoutMs: 5_000,
        what: "a connection error",
      });

      await own.start();
      await waitFor(() => (store.isHealthy() ? true : undefined), {
        timeoutMs: 10_000,
        what: "isHealthy() to turn true again",
      });
      // Redis ran without persistence, so the restarted server is empty; scripts must reload too.
      expect(await store.values.get("k")).toBeNull();
      expect((await store.counters.hit("after-restart", 10_000)).count).toBe(1);
      expect(await store.idempotency.begin("after-restart", 10_000)).toEqual({ status: "new" });
    } finally {
      await store.close();
      await own.stop();
    }
  });
});
