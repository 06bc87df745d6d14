import { type RedisClusterHandle, startRedisCluster } from "@gw/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueName } from "./contract-helpers.js";
import { describeFastStoreContract } from "./fast-store.contract.js";
import { describeHeldLeaseContract } from "./held-lease.contract.js";
import { keySlot } from "./key-slot.js";
import { createRedisFastStore } from "./redis-fast-store.js";

/** One 3-master Redis Cluster for the whole file. */
let cluster: RedisClusterHandle;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

const clusterStore = (keyPrefix = `${uniqueName("c")}:`) => createRedisFastStore({ url: cluster.nodes[0]!, nodes: cluster.nodes, keyPrefix });

describeFastStoreContract("redis cluster", () => clusterStore());
describeFastStoreContract("redis cluster, writes coalesced per turn", () =>
  createRedisFastStore({ url: cluster.nodes[0]!, nodes: cluster.nodes, keyPrefix: `${uniqueName("c")}:`, coalesceWrites: true }),
);

describeHeldLeaseContract("two clients of one redis cluster", async () => {
  const keyPrefix = `${uniqueName("c")}:`;
  return [await clusterStore(keyPrefix), await clusterStore(keyPrefix)];
});

describe("redis FastStore on a cluster", () => {
  it("reads and writes keys spread over every master in one call", async () => {
    const store = await clusterStore();
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
      // 30 untagged keys land on more than one slot (and, with 3 masters, on more than one node).
      expect(new Set(keys.map(keySlot)).size).toBeGreaterThan(1);
      await store.values.writeAll(keys.map((key, i) => ({ key, value: `v${i}`, ttlMs: 10_000 })));
      expect(await store.values.getMany([...keys, "absent"])).toEqual([...keys.map((_, i) => `v${i}`), null]);
      await store.values.writeAll(keys.map((key) => ({ key, value: null })));
      expect((await store.values.getMany(keys)).every((v) => v === null)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("keeps keys of one hash tag in one slot, where unawaited writes apply in order", async () => {
    const prefix = `${uniqueName("o")}:`;
    const store = await clusterStore(prefix);
    const raw = new Redis(cluster.nodes[0]!);
    try {
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 50; i++) {
        writes.push(store.values.writeAll([
          { key: "run:{r1}", value: `state-${i}` },
          { key: "runhb:{r1}", value: i % 2 === 0 ? "owner" : null },
        ]));
        writes.push(store.values.set("runabort:{r1}", `a-${i}`));
      }
      await Promise.all(writes);
      expect(await store.values.getMany(["run:{r1}", "runhb:{r1}", "runabort:{r1}"])).toEqual(["state-49", null, "a-49"]);
      // The node itself agrees the three share a slot.
      const slots = await Promise.all(["run", "runhb", "runabort"].map((k) => raw.cluster("KEYSLOT", `${prefix}val:${k}:{r1}`)));
      expect(new Set(slots).size).toBe(1);
      expect(slots[0]).toBe(keySlot("run:{r1}"));
    } finally {
      raw.disconnect();
      await store.close();
    }
  });
});
