import { connectRedis } from "@gw/store";
import { type RedisServerHandle, startRedis } from "@gw/testing";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { MemorySessionIndex } from "./memory-session-index.js";
import { RedisSessionIndex } from "./redis-session-index.js";
import { describeSessionIndexContract } from "./session-index.contract.js";

let redis: RedisServerHandle;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describeSessionIndexContract("memory", async () => new MemorySessionIndex());

// A fresh key prefix per test on one shared server.
describeSessionIndexContract("Redis", async () => new RedisSessionIndex(await connectRedis({ url: redis.url }), `t${randomUUID().slice(0, 8)}:`));
