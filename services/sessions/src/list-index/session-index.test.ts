import { connectRedis } from "@gw/store";
import { type RedisServerHandle, startRedis } from "@gw/testing";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { SessionMeta } from "../model.js";
import { MemorySessionIndex } from "./memory-session-index.js";
import { RedisSessionIndex } from "./redis-session-index.js";
import { describeSessionIndexContract } from "./session-index.contract.js";
import { newMeta } from "../contract-helpers.js";

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

it("leaves a stored entry that does not decode out of a Redis page, and says why", async () => {
  const problems: string[] = [];
  const index = new RedisSessionIndex(await connectRedis({ url: redis.url }), `t${randomUUID().slice(0, 8)}:`, (p) => problems.push(p));
  const good = newMeta("list:good", 1_000);
  await index.put(good, 1);
  await index.put({ ...newMeta("list:bad", 2_000), messageCount: "many" } as unknown as SessionMeta, 2);
  const page = await index.page({ agentId: "", offset: 0, limit: 10 });
  expect(page.sessions).toEqual([good]);
  expect(page.total).toBe(2);
  expect(problems).toHaveLength(1);
  await index.close();
});
