import { createMemoryFastStore, createRedisFastStore, type FastStore } from "@gw/store";
import { type RedisClusterHandle, type RedisServerHandle, startRedis, startRedisCluster } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelCooldowns } from "./model-cooldowns.js";

/**
 * Cooldowns as runners share them, on every FastStore backend: two runners are two clients of
 * one store (memory: one store object), each with its own ModelCooldowns.
 */
let redis: RedisServerHandle;
let cluster: RedisClusterHandle;
let prefixes = 0;
beforeAll(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startRedisCluster()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([redis?.stop(), cluster?.stop()]);
});

type Pair = () => Promise<[FastStore, FastStore]>;
const BACKENDS: Array<[string, Pair]> = [
  ["memory", () => {
    const store = createMemoryFastStore();
    return Promise.resolve([store, store]);
  }],
  ["redis", async () => {
    const keyPrefix = `cool${++prefixes}:`;
    return [await createRedisFastStore({ url: redis.url, keyPrefix }), await createRedisFastStore({ url: redis.url, keyPrefix })];
  }],
  ["redis cluster", async () => {
    const keyPrefix = `cool${++prefixes}:`;
    const open = () => createRedisFastStore({ url: cluster.nodes[0]!, nodes: cluster.nodes, keyPrefix });
    return [await open(), await open()];
  }],
];

describe.each(BACKENDS)("model cooldowns on %s", (_name, pair) => {
  it("a 429 cools that key for its Retry-After, seen at once by another runner; the other key stays ready", async () => {
    const [a, b] = await pair();
    try {
      const first = new ModelCooldowns(a);
      const second = new ModelCooldowns(b);
      expect(await first.rateLimited("p", "k1", 30_000)).toBe(30_000);
      const seen = await second.read(new Map([["p", ["k1", "k2"]], ["q", ["-"]]]));
      expect(seen.keys.get("p k1")).toBeGreaterThan(29_000);
      expect([seen.keys.get("p k2"), seen.providers.get("p"), seen.providers.get("q")]).toEqual([0, 0, 0]);
      // Without Retry-After: 1 s, then 2 s for the second 429 in a row.
      expect([await second.rateLimited("p", "k2", undefined), await first.rateLimited("p", "k2", undefined)]).toEqual([1_000, 2_000]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("counts provider failures from every runner and cools the provider at the third", async () => {
    const [a, b] = await pair();
    try {
      const first = new ModelCooldowns(a);
      const second = new ModelCooldowns(b);
      expect([await first.providerFailed("p"), await second.providerFailed("p"), await first.providerFailed("p")]).toEqual([0, 0, 5_000]);
      const status = await second.status("p", ["k1"]);
      expect(status.coolingMs).toBeGreaterThan(4_000);
      expect(status).toMatchObject({ failures: 3, keys: [{ id: "k1", coolingMs: 0, rateLimits: 0 }] });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
