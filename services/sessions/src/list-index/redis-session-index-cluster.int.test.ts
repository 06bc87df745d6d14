import { randomUUID } from "node:crypto";
import { connectRedis } from "@gw/store";
import { type RedisClusterHandle, startRedisCluster } from "@gw/testing";
import { afterAll, beforeAll } from "vitest";
import { RedisSessionIndex } from "./redis-session-index.js";
import { describeSessionIndexContract } from "./session-index.contract.js";

/** One 3-master Redis Cluster for the file: the index's keys share a hash tag, so its scripts run. */
let cluster: RedisClusterHandle;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

// A fresh key prefix per test; the client is the index's own (closed with it).
describeSessionIndexContract("Redis Cluster", async () =>
  new RedisSessionIndex(await connectRedis({ url: cluster.nodes[0]!, nodes: cluster.nodes }), `t${randomUUID().slice(0, 8)}:`),
);
