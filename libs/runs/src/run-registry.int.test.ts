import { createRedisFastStore } from "@gw/store";
import { type RedisServerHandle, startRedis } from "@gw/testing";
import { afterAll, beforeAll } from "vitest";
import { describeRunRegistryContract, TEST_REGISTRY_OPTIONS } from "./run-registry.contract.js";
import { RunRegistry } from "./run-registry.js";

let redis: RedisServerHandle;
let counter = 0;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describeRunRegistryContract("redis, two instances", async () => {
  // Two clients on one Redis, as an edge and a runner in separate processes.
  const keyPrefix = `runs${++counter}_${Math.random().toString(36).slice(2, 8)}:`;
  const [storeA, storeB] = await Promise.all([
    createRedisFastStore({ url: redis.url, keyPrefix }),
    createRedisFastStore({ url: redis.url, keyPrefix }),
  ]);
  return {
    a: new RunRegistry(storeA, TEST_REGISTRY_OPTIONS),
    b: new RunRegistry(storeB, TEST_REGISTRY_OPTIONS),
    elapse: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    async dispose() {
      await Promise.all([storeA.close(), storeB.close()]);
    },
  };
});
