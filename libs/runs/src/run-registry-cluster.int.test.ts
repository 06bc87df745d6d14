import { createRedisFastStore } from "@gw/store";
import { type RedisClusterHandle, startRedisCluster } from "@gw/testing";
import { afterAll, beforeAll } from "vitest";
import { describeRunRegistryContract, TEST_REGISTRY_OPTIONS } from "./run-registry.contract.js";
import { RunRegistry } from "./run-registry.js";

/** One 3-master Redis Cluster for the whole file. */
let cluster: RedisClusterHandle;
let counter = 0;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describeRunRegistryContract("redis cluster, two instances", async () => {
  // Two cluster clients, as an edge and a runner in separate processes. A run's keys share its
  // id as hash tag, so its MGET and ordered writes stay on one slot (no CROSSSLOT).
  const keyPrefix = `runs${++counter}_${Math.random().toString(36).slice(2, 8)}:`;
  const open = () => createRedisFastStore({ url: cluster.nodes[0]!, nodes: cluster.nodes, keyPrefix });
  const [storeA, storeB] = await Promise.all([open(), open()]);
  return {
    a: new RunRegistry(storeA, TEST_REGISTRY_OPTIONS),
    b: new RunRegistry(storeB, TEST_REGISTRY_OPTIONS),
    elapse: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    async dispose() {
      await Promise.all([storeA.close(), storeB.close()]);
    },
  };
});
