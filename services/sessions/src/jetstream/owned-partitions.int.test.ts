import { randomUUID } from "node:crypto";
import { connectNats } from "@gw/bus";
import { jetstreamManager } from "@nats-io/jetstream";
import { type NatsServerHandle, startNats } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newMeta, textBatch } from "../contract-helpers.js";
import type { JetStreamSessionRepository } from "./jetstream-repository.js";
import { countJetStreamRequests, JetStreamRepos } from "./contract-helpers.js";

let nats: NatsServerHandle;
beforeAll(async () => {
  nats = await startNats();
});
afterAll(async () => {
  await repos.close();
  await nats?.stop();
});

const PARTITIONS = 2;
const EVERY = new Set([0, 1]);
const repos = new JetStreamRepos(() => nats.url, { replicas: 1, partitions: PARTITIONS });

/** The JetStream requests a preview of `key` sends. */
async function previewRequests(repo: JetStreamSessionRepository, key: string): Promise<number> {
  const monitor = await connectNats({ url: nats.url });
  try {
    return (await countJetStreamRequests(monitor, () => repo.preview(key, 5))).length;
  } finally {
    await monitor.close();
  }
}

/**
 * Resolves once the watch of each of `prefix`'s buckets has its consumer on the server with a
 * pull waiting. own() returns at once and the watch's ordered consumer is created and pulls a
 * moment later: requests a count of the JetStream API (which sees every client's) would take
 * for the preview's own, and a consumer it created would have it wait for that consumer's
 * delete, which never comes for a watch.
 */
async function watching(prefix: string): Promise<void> {
  const monitor = await connectNats({ url: nats.url });
  try {
    const jsm = await jetstreamManager(monitor);
    const pulling = async (p: number) => {
      const consumers = await jsm.consumers.list(`KV_${prefix}_sessions_p${p}`).next();
      return consumers.some((c) => c.num_waiting > 0);
    };
    const everyPulling = async () => (await Promise.all([...EVERY].map(pulling))).every(Boolean);
    await expect.poll(everyPulling, { timeout: 15_000 }).toBe(true);
  } finally {
    await monitor.close();
  }
}

const bodies = async (repo: JetStreamSessionRepository, key: string) =>
  (await repo.preview(key, 5))?.entries.map((e) => e.body) ?? null;

describe("a sessions replica that owns partitions", () => {
  it("answers metadata, previews and tails from memory, and follows another replica's writes", async () => {
    const prefix = `o${randomUUID().slice(0, 8)}`;
    const owner = await repos.open(prefix);
    const other = await repos.open(prefix);
    owner.own(EVERY);
    await watching(prefix);
    const meta = (await owner.createMeta(newMeta("owned:one"))).meta;
    for (const b of ["a", "b"]) await owner.append(meta, textBatch(meta, [b]));
    // Once the partition's watch runs, an unchanged session costs no request at all.
    await expect.poll(() => previewRequests(owner, meta.key), { timeout: 5_000 }).toBe(0);
    expect(await bodies(owner, meta.key)).toEqual(["b", "a"]);
    const monitor = await connectNats({ url: nats.url });
    const requests = await countJetStreamRequests(monitor, async () => {
      const found = await owner.getMeta(meta.key);
      expect(found?.messageCount).toBe(2);
      expect((await owner.tail(found!, 10)).map((e) => e.body)).toEqual(["b", "a"]);
    });
    expect(requests).toEqual([]);
    await monitor.close();

    // Another replica's writes arrive through the watch.
    await other.append(meta, textBatch(meta, ["c"]));
    await owner.caughtUp();
    expect(await bodies(owner, meta.key)).toEqual(["c", "b", "a"]);
    expect((await owner.getMeta(meta.key))?.messageCount).toBe(3);
    await other.updateMeta(meta.key, (m) => ({ ...m, model: "other/model" }));
    await owner.caughtUp();
    expect((await owner.getMeta(meta.key))?.model).toBe("other/model");
    expect(await other.delete(meta.key)).toBe(true);
    await owner.caughtUp();
    expect(await owner.preview(meta.key, 5)).toBeNull();
    expect(await previewRequests(owner, meta.key)).toBe(0);
  });

  it("updates what it wrote itself at once, and retries a stale compare-and-set from storage", async () => {
    const prefix = `w${randomUUID().slice(0, 8)}`;
    const owner = await repos.open(prefix);
    const other = await repos.open(prefix);
    owner.own(EVERY);
    await watching(prefix);
    // The watch is live before the write: the owner keeps what it wrote, and reads nothing back.
    const meta = (await owner.createMeta(newMeta("owned:two"))).meta;
    expect(await previewRequests(owner, meta.key)).toBe(0);
    await owner.append(meta, textBatch(meta, ["mine"]));
    expect(await bodies(owner, meta.key)).toEqual(["mine"]);
    // Whatever the watch has delivered of the other's write, the owner's next write builds on it.
    await other.updateMeta(meta.key, (m) => ({ ...m, thinking: "high" }));
    await owner.updateMeta(meta.key, (m) => ({ ...m, model: "owner/model" }));
    expect(await other.getMeta(meta.key)).toMatchObject({ thinking: "high", model: "owner/model" });
    expect(await owner.delete(meta.key)).toBe(true);
    expect(await owner.preview(meta.key, 5)).toBeNull();
  });

  it("reads storage again at once for a partition it no longer owns", async () => {
    const prefix = `l${randomUUID().slice(0, 8)}`;
    const owner = await repos.open(prefix);
    const other = await repos.open(prefix);
    owner.own(EVERY);
    await watching(prefix);
    const meta = (await owner.createMeta(newMeta("owned:three"))).meta;
    await owner.append(meta, textBatch(meta, ["a"]));
    await expect.poll(() => previewRequests(owner, meta.key), { timeout: 5_000 }).toBe(0);
    owner.own(new Set());
    await other.append(meta, textBatch(meta, ["b"]));
    // No wait for any watch: the next read goes to storage.
    expect(await bodies(owner, meta.key)).toEqual(["b", "a"]);
    expect(await previewRequests(owner, meta.key)).toBeGreaterThan(0);
  });

  it("stops answering from memory when NATS goes away, and follows every write once it is back", async () => {
    const prefix = `r${randomUUID().slice(0, 8)}`;
    const owner = await repos.open(prefix);
    const other = await repos.open(prefix);
    owner.own(EVERY);
    await watching(prefix);
    const meta = (await owner.createMeta(newMeta("owned:restart"))).meta;
    await owner.append(meta, textBatch(meta, ["a"]));
    await expect.poll(() => previewRequests(owner, meta.key), { timeout: 5_000 }).toBe(0);
    await nats.kill();
    // Nothing answers from memory once the client knows the connection is down.
    const outcome = () => owner.preview(meta.key, 5).then(() => "answered", () => "refused");
    await expect.poll(outcome, { timeout: 5_000 }).toBe("refused");
    await nats.start();
    await expect.poll(() => other.append(meta, textBatch(meta, ["b"])).then(() => true, () => false), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => bodies(owner, meta.key).catch(() => null), { timeout: 15_000 }).toEqual(["b", "a"]);
    // The watch is back: memory answers again, and it sees the other replica's next write.
    await expect.poll(() => previewRequests(owner, meta.key), { timeout: 10_000 }).toBe(0);
    await other.append(meta, textBatch(meta, ["c"]));
    await owner.caughtUp();
    expect(await bodies(owner, meta.key)).toEqual(["c", "b", "a"]);
  });
});
