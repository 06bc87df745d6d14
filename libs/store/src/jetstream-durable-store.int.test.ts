import { type NatsServerHandle, startNats, waitFor } from "@gw/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueName } from "./contract-helpers.js";
import { describeDurableKvContract } from "./durable-kv.contract.js";
import type { DurableStore } from "./durable-store.js";
import { createJetStreamDurableStore } from "./jetstream-durable-store.js";

let nats: NatsServerHandle;
beforeAll(async () => {
  nats = await startNats();
});
afterAll(async () => {
  await nats?.stop();
});

const connectTo = (server: NatsServerHandle) =>
  connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });

describeDurableKvContract("jetstream", async () => {
  let nc: NatsConnection = await connectTo(nats);
  // A unique prefix per test keeps buckets apart while every test shares one server.
  const bucketPrefix = `${uniqueName("t")}_`;
  let store: DurableStore = createJetStreamDurableStore(nc, { bucketPrefix });
  return {
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      await nc.close();
      await nats.kill();
      await nats.start();
      nc = await connectTo(nats);
      store = createJetStreamDurableStore(nc, { bucketPrefix });
      return store;
    },
    async dispose() {
      await store.close();
      await nc.close();
    },
  };
});

describe("JetStream DurableStore delete markers", () => {
  it("sweeps old markers of deleted keys, and never a value written after a marker", async () => {
    const nc = await connectTo(nats);
    const bucketPrefix = `${uniqueName("m")}_`;
    const store = createJetStreamDurableStore(nc, { bucketPrefix, markerRetentionMs: 0 });
    const text = (v: string) => new TextEncoder().encode(v);
    try {
      const kv = await store.kv("jobs");
      for (let i = 0; i < 20; i++) {
        await kv.put(`job-${i}`, text("work"));
        await kv.delete(`job-${i}`);
      }
      await kv.put("kept", text("live"));
      await kv.put("again", text("v1"));
      await kv.delete("again");
      await kv.put("again", text("v2"));
      const jsm = await jetstreamManager(nc);
      const stream = `KV_${bucketPrefix}jobs`;
      // History 1: a delete replaces its value with a marker, one message per key ever used.
      expect((await jsm.streams.info(stream)).state.messages).toBe(22);

      expect(await store.sweep()).toBe(20);
      // One message per live key is all that is left; the values are untouched.
      expect((await jsm.streams.info(stream)).state.messages).toBe(2);
      expect(await kv.keys()).toEqual(["again", "kept"]);
      expect(new TextDecoder().decode((await kv.get("again"))!.value)).toBe("v2");
      expect(await kv.get("job-3")).toBeNull();
      await kv.create("job-3", text("reused"));
      expect(await store.sweep()).toBe(0);
    } finally {
      await store.close();
      await nc.close();
    }
  });
});

describe("JetStream DurableStore health", () => {
  it("reports the connection going away and coming back, and keeps its data", async () => {
    const own = await startNats();
    const nc = await connectTo(own);
    const store = createJetStreamDurableStore(nc);
    try {
      const kv = await store.kv("health");
      const rev = await kv.put("k", new TextEncoder().encode("kept"));
      expect(store.isHealthy()).toBe(true);

      await own.kill();
      await waitFor(() => (store.isHealthy() ? undefined : true), { what: "isHealthy() to turn false" });
      await own.start();
      await waitFor(() => (store.isHealthy() ? true : undefined), {
        timeoutMs: 10_000,
        what: "isHealthy() to turn true again",
      });
      expect(
        await waitFor(() => kv.get("k"), { timeoutMs: 10_000, what: "the bucket to serve reads" }),
      ).toEqual({
        value: new TextEncoder().encode("kept"),
        revision: rev,
      });
    } finally {
      await store.close();
      await nc.close();
      await own.stop();
    }
  });

  it("turns unhealthy when the connection is closed", async () => {
    const nc = await connectTo(nats);
    const store = createJetStreamDurableStore(nc);
    expect(store.isHealthy()).toBe(true);
    await nc.close();
    expect(store.isHealthy()).toBe(false);
    await store.close();
  });

  it("stores keys with readable escapes, so operators can read them with the nats CLI", async () => {
    const nc = await connectTo(nats);
    const store = createJetStreamDurableStore(nc, { bucketPrefix: "gwtest_" });
    try {
      const bucket = uniqueName("enc");
      await (await store.kv(bucket)).put("agent:main@x.y", new Uint8Array([1]));
      const raw = await new Kvm(nc).open(`gwtest_${bucket}`);
      const rawKeys: string[] = [];
      for await (const k of await raw.keys()) rawKeys.push(k);
      expect(rawKeys).toEqual(["agent=3Amain=40x=2Ey"]);
    } finally {
      await store.close();
      await nc.close();
    }
  });
});
