import { type NatsClusterHandle, startNatsCluster } from "@gw/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueName } from "./contract-helpers.js";
import { describeDurableKvContract } from "./durable-kv.contract.js";
import type { DurableStore } from "./durable-store.js";
import { createJetStreamDurableStore } from "./jetstream-durable-store.js";

/** One 3-node NATS cluster for the whole file; every bucket is R3. */
let cluster: NatsClusterHandle;
beforeAll(async () => {
  cluster = await startNatsCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

const connectTo = () => connect({ servers: cluster.urls, maxReconnectAttempts: -1, reconnectTimeWait: 100 });

describeDurableKvContract("jetstream R3 on a 3-node cluster", async () => {
  let nc: NatsConnection = await connectTo();
  const bucketPrefix = `${uniqueName("t")}_`;
  let store: DurableStore = createJetStreamDurableStore(nc, { bucketPrefix, replicas: 3 });
  return {
    get store() {
      return store;
    },
    async reopen() {
      // A restart of the process while one node is down: a majority still serves the buckets.
      await store.close();
      await nc.close();
      const node = cluster.nodes[0]!;
      await node.kill();
      nc = await connectTo();
      store = createJetStreamDurableStore(nc, { bucketPrefix, replicas: 3 });
      const reopened = store;
      await node.start();
      return reopened;
    },
    async dispose() {
      await store.close();
      await nc.close();
    },
  };
});

describe("JetStream DurableStore on R3", () => {
  it("creates replicated buckets that read through the stream leader", async () => {
    const nc = await connectTo();
    try {
      const bucketPrefix = `${uniqueName("r")}_`;
      const store = createJetStreamDurableStore(nc, { bucketPrefix, replicas: 3 });
      const kv = await store.kv("devices");
      await kv.put("k", new TextEncoder().encode("v"));
      const info = await (await jetstreamManager(nc)).streams.info(`KV_${bucketPrefix}devices`);
      expect(info.config.num_replicas).toBe(3);
      // Direct gets would be answered by any replica, a lagging follower too (docs/decisions.md).
      expect(info.config.allow_direct).toBe(false);
      expect(new TextDecoder().decode((await kv.get("k"))!.value)).toBe("v");
      await store.close();
    } finally {
      await nc.close();
    }
  });
});
