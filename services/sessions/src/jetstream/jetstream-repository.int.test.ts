import { randomUUID } from "node:crypto";
import { connectNats, encodeSubjectToken } from "@gw/bus";
import { type NatsServerHandle, startNats } from "@gw/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JetStreamSessionRepository } from "./jetstream-repository.js";
import { describeRepositoryContract, expectChain, newMeta, textBatch } from "../repository.contract.js";

let nats: NatsServerHandle;
const connections: NatsConnection[] = [];
beforeAll(async () => {
  nats = await startNats();
});
afterAll(async () => {
  await Promise.all(connections.map((nc) => nc.close()));
  await nats?.stop();
});

async function openRepo(subjectPrefix: string): Promise<JetStreamSessionRepository> {
  const nc = await connectNats({ url: nats.url });
  connections.push(nc);
  return JetStreamSessionRepository.open(nc, { subjectPrefix });
}

/** The messages on `key`'s entries subject and its metadata value, read with the stream API. */
async function leftovers(prefix: string, key: string): Promise<string[]> {
  const jsm = await jetstreamManager(connections[0]!);
  const token = encodeSubjectToken(key);
  const found: string[] = [];
  const entries = `${prefix}.sessions.entries.${token}`;
  const info = await jsm.streams.info(`${prefix}_session_entries`, { subjects_filter: entries });
  const count = info.state.subjects?.[entries] ?? 0;
  if (count > 0) found.push(`${count} message(s) on ${entries}`);
  // A purge leaves an empty marker on the key's subject (history 1): no value, no key.
  const meta = await jsm.streams.getMessage(`KV_${prefix}_sessions`, { last_by_subj: `$KV.${prefix}_sessions.${token}` });
  const operation = meta?.header?.get("KV-Operation") || "PUT";
  if (meta && (operation === "PUT" || meta.data.length > 0)) found.push(`KV key ${token} (${operation})`);
  return found;
}

describeRepositoryContract("JetStream", async () => {
  // A fresh prefix per test: its own stream and bucket on the shared server.
  const prefix = `t${randomUUID().slice(0, 8)}`;
  let repo = await openRepo(prefix);
  const replicas: JetStreamSessionRepository[] = [];
  return {
    get repo() {
      return repo;
    },
    async replica() {
      const other = await openRepo(prefix);
      replicas.push(other);
      return other;
    },
    async reopen() {
      await repo.close();
      repo = await openRepo(prefix);
      return repo;
    },
    leftovers: (key) => leftovers(prefix, key),
    async dispose() {
      await Promise.all([repo, ...replicas].map((r) => r.close()));
    },
  };
});

describe("JetStream session store across a nats-server restart", () => {
  it("keeps every acknowledged entry with its links", async () => {
    const repo = await openRepo(`r${randomUUID().slice(0, 8)}`);
    const meta = (await repo.createMeta(newMeta("restart:one"))).meta;
    for (const b of ["a", "b", "c"]) await repo.append(meta, textBatch(meta, [b]));
    // Cached tail and metadata index in use before the restart.
    expect((await repo.preview(meta.key, 5))?.entries.map((e) => e.body)).toEqual(["c", "b", "a"]);
    await nats.kill();
    await nats.start();
    await expect
      .poll(async () => (await repo.getMeta(meta.key).catch(() => null))?.messageCount, { timeout: 15_000 })
      .toBe(3);
    await repo.append(meta, textBatch(meta, ["d"]));
    expectChain((await repo.branch(meta)).entries, ["a", "b", "c", "d"]);
    expect((await repo.listMeta()).map((m) => m.key)).toContain(meta.key);
    // The index's watch came back with the server: the preview shows the write made after it.
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

  it("previews an unchanged session from memory, and every write another replica acknowledged at once", async () => {
    const prefix = `p${randomUUID().slice(0, 8)}`;
    const [writer, reader] = [await openRepo(prefix), await openRepo(prefix)];
    // Every read of the entries stream and of a metadata key goes through the JetStream API or
    // a direct get on this server: a monitor sees each one.
    const monitor = await connectNats({ url: nats.url });
    connections.push(monitor);
    const reads: string[] = [];
    const record = (_err: Error | null, msg: Msg) => {
      reads.push(msg.subject);
    };
    monitor.subscribe("$JS.API.DIRECT.GET.>", { callback: record });
    monitor.subscribe("$JS.API.STREAM.MSG.GET.>", { callback: record });
    await monitor.flush();
    const bodies = async (limit = 10) => (await reader.preview(meta.key, limit))?.entries.map((e) => e.body);

    const meta = (await writer.createMeta(newMeta("preview:fast"))).meta;
    await writer.append(meta, textBatch(meta, ["a", "b"]));
    expect(await bodies()).toEqual(["b", "a"]);
    await monitor.flush();
    reads.length = 0;
    for (let i = 0; i < 20; i++) expect(await bodies()).toEqual(["b", "a"]);
    await monitor.flush();
    expect(reads).toEqual([]);

    // Whatever the other replica acknowledged shows in the very next preview.
    for (let i = 0; i < 30; i++) {
      await writer.append(meta, textBatch(meta, [`m${i}`]));
      expect((await bodies(1))?.[0]).toBe(`m${i}`);
    }
    const patched = await writer.updateMeta(meta.key, (current) => ({ ...current, model: "openai/other" }));
    expect(patched?.after.model).toBe("openai/other");
    expect((await reader.preview(meta.key, 1))?.meta.model).toBe("openai/other");
    expect(await writer.delete(meta.key)).toBe(true);
    expect(await reader.preview(meta.key, 1)).toBeNull();
    await Promise.all([writer.close(), reader.close()]);
  });

  it("turns on direct gets for an existing single-replica stream", async () => {
    const prefix = `d${randomUUID().slice(0, 8)}`;
    const nc = await connectNats({ url: nats.url });
    connections.push(nc);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: `${prefix}_session_entries`, subjects: [`${prefix}.sessions.entries.>`], allow_rollup_hdrs: true });
    const repo = await openRepo(prefix);
    expect((await jsm.streams.info(`${prefix}_session_entries`)).config.allow_direct).toBe(true);
    const meta = (await repo.createMeta(newMeta("direct:one"))).meta;
    await repo.append(meta, textBatch(meta, ["a"]));
    expect((await repo.preview(meta.key, 5))?.entries.map((e) => e.body)).toEqual(["a"]);
    await repo.close();
  });
});
