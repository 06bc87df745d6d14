import { randomUUID } from "node:crypto";
import { type NatsClusterHandle, startNatsCluster, waitFor } from "@gw/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JetStreamRepos } from "./contract-helpers.js";
import { describeRepositoryContract } from "../repository.contract.js";
import { expectChain, newMeta, textBatch } from "../contract-helpers.js";

/** One 3-node NATS cluster for the whole file; the session stream and bucket are R3. */
let cluster: NatsClusterHandle;
/** Two partitions: the contract's keys land in both. */
const repos = new JetStreamRepos(() => cluster.urls.join(","), { replicas: 3, partitions: 2 });
beforeAll(async () => {
  cluster = await startNatsCluster();
}, 60_000);
afterAll(async () => {
  await repos.close();
  await cluster?.stop();
});

describeRepositoryContract("JetStream R3 on a 3-node cluster", () => repos.subject());
// The owner of every partition answering from memory, its watches on R3 buckets.
describeRepositoryContract("JetStream R3 on a 3-node cluster, owner answering from memory", () => repos.subject({ owner: true }));

describe("R3 session store when a node dies under load", () => {
  it.each([
    ["a replica that owns nothing", false],
    ["the owner of every partition", true],
  ])("answers every append and keeps every acknowledged entry, while the stream's leader is killed (%s)", async (_, owner) => {
    const prefix = `k${randomUUID().slice(0, 8)}`;
    const repo = await repos.open(prefix);
    if (owner) repo.own(new Set([0, 1]));
    const jsm = await jetstreamManager(repos.connections.at(-1)!);
    // Every writer's key in partition 0, so killing that stream's leader hits all of them.
    const keys = Array.from({ length: 40 }, (_, i) => `load:${i}`)
      .filter((k) => repos.entriesStream(prefix, k) === repos.entriesStream(prefix, "load:0"))
      .slice(0, 6);
    const info = await jsm.streams.info(repos.entriesStream(prefix, keys[0]!));
    expect(info.config.num_replicas).toBe(3);
    const leader = cluster.nodes.find((n) => n.name === info.cluster?.leader)!;
    expect(leader, "the stream has a leader").toBeDefined();

    // Six sessions, each written by its own sequential writer, 25 appends each.
    const acked = new Map<string, string[]>(keys.map((k) => [k, []]));
    let answered = 0;
    let ackedTotal = 0;
    const writer = async (key: string) => {
      let meta = (await repo.createMeta(newMeta(key))).meta;
      for (let i = 0; i < 25; i++) {
        const body = `${key}#${i}`;
        try {
          meta = (await repo.append(meta, textBatch(meta, [body]))).meta;
          acked.get(key)!.push(body);
          ackedTotal++;
        } catch {
          // Refused (UNAVAILABLE while the leader moves): an answer too. Read the tip again.
          meta = (await repo.getMeta(key).catch(() => null)) ?? meta;
        }
        answered++;
      }
    };
    const killer = (async () => {
      while (ackedTotal < 40) await new Promise((resolve) => setTimeout(resolve, 20));
      await leader.kill();
    })();
    await Promise.all([...keys.map(writer), killer]);

    expect(answered).toBe(keys.length * 25);
    // Every acknowledged entry is there, in order, in one chain; a refused append may have landed too.
    for (const key of keys) {
      // Read once the streams have their new leaders (a read during the election may time out).
      const entries = await waitFor(
        async () => {
          const meta = await repo.getMeta(key);
          return meta === null ? undefined : (await repo.branch(meta)).entries;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: `the history of ${key}` },
      );
      expectChain(entries);
      const bodies = entries.map((e) => e.body);
      expect(bodies.filter((b) => acked.get(key)!.includes(b))).toEqual(acked.get(key));
    }
    expect(ackedTotal).toBeGreaterThan(40);
    await leader.start();
    await repo.close();
  }, 90_000);
});
