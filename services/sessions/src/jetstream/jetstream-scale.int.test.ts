import { randomUUID } from "node:crypto";
import { connectNats } from "@gw/bus";
import { connectRedis, type RedisClient } from "@gw/store";
import { type NatsServerHandle, type RedisServerHandle, startNats, startRedis } from "@gw/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisSessionIndex } from "../list-index/redis-session-index.js";
import type { SessionIndex } from "../list-index/session-index.js";
import type { SessionMeta } from "../model.js";
import { newMeta, textBatch } from "../contract-helpers.js";
import { startIndexFeed } from "./index-feed.js";
import { JetStreamSessionRepository } from "./jetstream-repository.js";
import { countJetStreamRequests } from "./contract-helpers.js";

let nats: NatsServerHandle;
let redis: RedisServerHandle;
const connections: NatsConnection[] = [];
const clients: RedisClient[] = [];
beforeAll(async () => {
  [nats, redis] = await Promise.all([startNats(), startRedis()]);
});
afterAll(async () => {
  await Promise.all(connections.map((nc) => nc.close()));
  for (const client of clients) client.disconnect();
  await Promise.all([nats?.stop(), redis?.stop()]);
});

async function nc(): Promise<NatsConnection> {
  const conn = await connectNats({ url: nats.url });
  connections.push(conn);
  return conn;
}

async function redisIndex(prefix: string): Promise<{ index: RedisSessionIndex; client: RedisClient }> {
  const client = await connectRedis({ url: redis.url });
  clients.push(client);
  return { index: new RedisSessionIndex(client, `${prefix}:`), client };
}

async function openRepo(prefix: string, index: SessionIndex, partitions = 4): Promise<JetStreamSessionRepository> {
  return JetStreamSessionRepository.open(await nc(), { subjectPrefix: prefix, partitions, index });
}

/** Every JetStream API request (direct gets included) sent to the server while `work` runs. */
const countRequests = async (work: () => Promise<unknown>) => countJetStreamRequests(await nc(), work);

describe("JetStream sessions at scale", () => {
  it("loads a history with as many JetStream requests for 400 prior messages as for 10", async () => {
    const prefix = `h${randomUUID().slice(0, 8)}`;
    const { index } = await redisIndex(prefix);
    const writer = await openRepo(prefix, index);
    const load = async (count: number) => {
      const meta = (await writer.createMeta(newMeta(`history:${count}`))).meta;
      for (let i = 0; i < count; i++) await writer.append(meta, textBatch(meta, [`m${i}`]));
      // A replica that never saw the session: nothing cached, every read goes to the server.
      const reader = await openRepo(prefix, index);
      let loaded = 0;
      const requests = await countRequests(async () => {
        const found = await reader.getMeta(meta.key);
        loaded = (await reader.tail(found!, 400)).length;
      });
      expect(loaded).toBe(count);
      return requests;
    };
    const short = await load(10);
    const long = await load(400);
    // The same requests, by kind: two direct gets, then create, pull and delete one consumer.
    const kinds = (subjects: string[]) => subjects.map((s) => s.split(".").slice(2, 4).join("."));
    expect(kinds(long)).toEqual(kinds(short));
    expect(kinds(long)).toEqual(["DIRECT.GET", "DIRECT.GET", "CONSUMER.CREATE", "CONSUMER.MSG", "CONSUMER.DELETE"]);
  });

  it("loads an active session's 400-entry history from the cache of the replica that writes it", async () => {
    const prefix = `w${randomUUID().slice(0, 8)}`;
    const { index } = await redisIndex(prefix);
    const owner = await openRepo(prefix, index);
    const meta = (await owner.createMeta(newMeta("history:warm"))).meta;
    for (let i = 0; i < 450; i++) await owner.append(meta, textBatch(meta, [`m${i}`]));
    expect(await owner.tail(meta, 400)).toHaveLength(400);
    await owner.append(meta, textBatch(meta, ["next turn"]));
    let newest: string | undefined;
    const requests = await countRequests(async () => {
      const found = await owner.getMeta(meta.key);
      newest = (await owner.tail(found!, 400))[0]?.body;
    });
    expect(newest).toBe("next turn");
    expect(requests.map((s) => s.split(".").slice(2, 4).join("."))).toEqual(["DIRECT.GET", "DIRECT.GET"]);
  });

  it("previews an unchanged session with two reads and no consumer", async () => {
    const prefix = `p${randomUUID().slice(0, 8)}`;
    const { index } = await redisIndex(prefix);
    const repo = await openRepo(prefix, index);
    const meta = (await repo.createMeta(newMeta("preview:warm"))).meta;
    for (let i = 0; i < 60; i++) await repo.append(meta, textBatch(meta, [`m${i}`]));
    expect((await repo.preview(meta.key, 20))?.entries).toHaveLength(20);
    const requests = await countRequests(() => repo.preview(meta.key, 20));
    expect(requests).toHaveLength(2);
    expect(requests.every((subject) => subject.startsWith("$JS.API.DIRECT.GET."))).toBe(true);
  });

  it("repairs the index from the metadata buckets when the direct updates were lost", async () => {
    const prefix = `f${randomUUID().slice(0, 8)}`;
    const { index, client } = await redisIndex(prefix);
    // A writer whose index never answers: every metadata write reaches only NATS.
    const lost: SessionIndex = {
      put: () => Promise.reject(new Error("index down")),
      remove: () => Promise.reject(new Error("index down")),
      page: (q) => index.page(q),
      epoch: () => index.epoch(),
      close: async () => {},
    };
    const writer = await openRepo(prefix, lost);
    const metas: SessionMeta[] = [];
    for (let i = 0; i < 12; i++) metas.push((await writer.createMeta({ ...newMeta(`feed:${i}`), agentId: "fed" })).meta);
    // Strictly newer than every creation, so it heads the list.
    await new Promise((r) => setTimeout(r, 5));
    await writer.append(metas[3]!, textBatch(metas[3]!, ["newest"]));
    await writer.delete(metas[4]!.key);
    const page = () => index.page({ agentId: "fed", offset: 0, limit: 50 });
    expect((await page()).total).toBe(0);

    const reader = await openRepo(prefix, index);
    const feed = startIndexFeed({ ...reader.feedParts(), index, epochCheckMs: 200 });
    try {
      // Every partition's changes arrive in order, the partitions each at their own pace.
      const repaired = async () => {
        const { total, sessions } = await page();
        const top = sessions[0];
        const deleted = sessions.some((m) => m.key === metas[4]!.key);
        return total === 11 && top?.key === metas[3]!.key && top.messageCount === 1 && !deleted;
      };
      await expect.poll(repaired, { timeout: 10_000 }).toBe(true);
      // Redis loses everything: a new epoch, and the feed rebuilds the index from the buckets.
      await client.flushall();
      await expect.poll(repaired, { timeout: 10_000 }).toBe(true);
    } finally {
      await feed.stop();
    }
  });

  it("refuses to open the sessions with another partition count than they were stored with", async () => {
    const prefix = `l${randomUUID().slice(0, 8)}`;
    const { index } = await redisIndex(prefix);
    await openRepo(prefix, index, 4);
    await expect(openRepo(prefix, index, 8)).rejects.toThrow(/sessions.partitions is 8 .* 4 partitions/);
  });

  it("refuses to start over sessions stored before partitioning instead of hiding them", async () => {
    const prefix = `o${randomUUID().slice(0, 8)}`;
    const { index } = await redisIndex(prefix);
    const js = jetstream(await nc());
    const jsm = await jetstreamManager(await nc());
    await jsm.streams.add({ name: `${prefix}_session_entries`, subjects: [`${prefix}.sessions.entries.>`] });
    await js.publish(`${prefix}.sessions.entries.a2V5`, "{}");
    await expect(openRepo(prefix, index)).rejects.toThrow(/holds sessions in the layout before sessions.partitions/);
  });
});
