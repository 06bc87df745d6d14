import { randomUUID } from "node:crypto";
import { connectNats } from "@gw/bus";
import { connectRedis } from "@gw/store";
import { type NatsServerHandle, type RedisServerHandle, startNats, startRedis } from "@gw/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisSessionIndex } from "../list-index/redis-session-index.js";
import { JetStreamRepos } from "./contract-helpers.js";
import { describeRepositoryContract } from "../repository.contract.js";
import { expectChain, newMeta, textBatch } from "../contract-helpers.js";

let nats: NatsServerHandle;
let redis: RedisServerHandle;
const connections: NatsConnection[] = [];
beforeAll(async () => {
  [nats, redis] = await Promise.all([startNats(), startRedis()]);
});
afterAll(async () => {
  await repos.close();
  await Promise.all(connections.map((nc) => nc.close()));
  await Promise.all([nats?.stop(), redis?.stop()]);
});

/** Four partitions (the contract's keys land in several); the index under a key prefix per store. */
const PARTITIONS = 4;
const repos = new JetStreamRepos(() => nats.url, {
  replicas: 1,
  partitions: PARTITIONS,
  index: async (subjectPrefix) => new RedisSessionIndex(await connectRedis({ url: redis.url }), `${subjectPrefix}:`),
});
const openRepo = (subjectPrefix: string, partitions?: number) => repos.open(subjectPrefix, partitions);

// A fresh prefix per test: its own streams and buckets on the shared server.
describeRepositoryContract("JetStream", () => repos.subject());
// The same with the repository owning every partition: metadata and tails answer from memory.
describeRepositoryContract("JetStream, owner answering from memory", () => repos.subject({ owner: true }));

describe("JetStream session store across a nats-server restart", () => {
  it("keeps every acknowledged entry with its links", async () => {
    const repo = await openRepo(`r${randomUUID().slice(0, 8)}`);
    const meta = (await repo.createMeta(newMeta("restart:one"))).meta;
    for (const b of ["a", "b", "c"]) await repo.append(meta, textBatch(meta, [b]));
    // A cached tail in use before the restart.
    expect((await repo.preview(meta.key, 5))?.entries.map((e) => e.body)).toEqual(["c", "b", "a"]);
    await nats.kill();
    await nats.start();
    await expect
      .poll(async () => (await repo.getMeta(meta.key).catch(() => null))?.messageCount, { timeout: 15_000 })
      .toBe(3);
    await repo.append(meta, textBatch(meta, ["d"]));
    expectChain((await repo.branch(meta)).entries, ["a", "b", "c", "d"]);
    expect((await repo.listPage({ agentId: "", offset: 0, limit: 10 })).sessions.map((m) => m.key)).toContain(meta.key);
    expect((await repo.preview(meta.key, 5))?.entries.map((e) => e.body)).toEqual(["d", "c", "b", "a"]);
    await repo.close();
  });
});

describe("JetStream session store tail cache", () => {
  it("never previews a stale tail while two replicas append and read at once", async () => {
    const prefix = `c${randomUUID().slice(0, 8)}`;
    const [a, b] = [await openRepo(prefix), await openRepo(prefix)];
    const meta = (await a.createMeta(newMeta("cache:two"))).meta;
    const written: string[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const [writer, reader] = i % 2 ? [a, b] : [b, a];
        await writer.append(meta, textBatch(meta, [`m${i}`]));
        written.push(`m${i}`);
        // Everything acknowledged so far is in the reader's next tail, newest first, as one chain.
        const seen = (await reader.tail(meta, 200)).map((e) => e.body);
        expect(seen).toEqual(expect.arrayContaining([`m${i}`]));
      }),
    );
    const { entries } = await a.branch(meta);
    const newestFirst = entries.map((e) => e.body).reverse();
    expect(new Set(newestFirst)).toEqual(new Set(written));
    for (const repo of [a, b]) {
      expect((await repo.tail(meta, 200)).map((e) => e.body)).toEqual(newestFirst);
      expect((await repo.preview(meta.key, 5))?.entries.map((e) => e.body)).toEqual(newestFirst.slice(0, 5));
    }
    await Promise.all([a.close(), b.close()]);
  });

  it("turns on direct gets for an existing single-replica stream", async () => {
    const prefix = `d${randomUUID().slice(0, 8)}`;
    const nc = await connectNats({ url: nats.url });
    connections.push(nc);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: `${prefix}_session_entries_p0`, subjects: [`${prefix}.sessions.p0.entries.>`], allow_rollup_hdrs: true });
    const repo = await openRepo(prefix, 1);
    expect((await jsm.streams.info(`${prefix}_session_entries_p0`)).config.allow_direct).toBe(true);
    const meta = (await repo.createMeta(newMeta("direct:one"))).meta;
    await repo.append(meta, textBatch(meta, ["a"]));
    expect((await repo.preview(meta.key, 5))?.entries.map((e) => e.body)).toEqual(["a"]);
    await repo.close();
  });
});
