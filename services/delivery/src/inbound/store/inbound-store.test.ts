import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileDurableStore, type DurableKv, type DurableStore } from "@gw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inboundMessage } from "../../../test/inbound-fixtures.js";
import { InboundStore } from "./inbound-store.js";

const origin = { channelId: "tg", accountId: "default" };
const SESSION = "tg:42";

let dir: string;
let durable: DurableStore;
let kv: DurableKv;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "inbound-store-"));
  durable = await createFileDurableStore(dir);
  kv = await durable.kv("delivery_inbound");
});
afterEach(() => durable.close());

const eventIds = async (store: InboundStore, key: string) => (await store.read(key))?.queue.items.map((i) => i.message.eventId) ?? [];

describe("InboundStore", () => {
  it("keeps a session's messages in arrival order, each eventId once", async () => {
    const store = new InboundStore(kv, { maxPerSession: 10 });
    const first = await store.append(origin, SESSION, [inboundMessage("1"), inboundMessage("2"), inboundMessage("1")], new Set());
    expect(first.added).toBe(2);
    const again = await store.append(origin, SESSION, [inboundMessage("2"), inboundMessage("3")], new Set(["3"]));
    expect(again).toEqual({ key: first.key, added: 0 });
    await store.append(origin, SESSION, [inboundMessage("4")], new Set());
    expect(await eventIds(store, first.key)).toEqual(["1", "2", "4"]);
  });

  it("gives every session of every account its own record", () => {
    const a = InboundStore.queueKey(origin, "tg:42");
    expect(InboundStore.queueKey(origin, "tg:43")).not.toBe(a);
    expect(InboundStore.queueKey({ ...origin, accountId: "other" }, "tg:42")).not.toBe(a);
    expect(a).toMatch(/^q_[A-Za-z0-9_-]{32}$/);
  });

  it("loses no message when several writers append to one session at once", async () => {
    const writers = [new InboundStore(kv, { maxPerSession: 500 }), new InboundStore(kv, { maxPerSession: 500 })];
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => writers[i % 2]!.append(origin, SESSION, [inboundMessage(String(i))], new Set())),
    );
    const ids = await eventIds(writers[0]!, InboundStore.queueKey(origin, SESSION));
    expect(ids.sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
  });

  it("refuses more than maxPerSession waiting messages with UNAVAILABLE, storing none of the batch", async () => {
    const store = new InboundStore(kv, { maxPerSession: 2 });
    await store.append(origin, SESSION, [inboundMessage("1")], new Set());
    await expect(store.append(origin, SESSION, [inboundMessage("2"), inboundMessage("3")], new Set())).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(await eventIds(store, InboundStore.queueKey(origin, SESSION))).toEqual(["1"]);
  });

  it("removes the record with its last message, but keeps one appended meanwhile", async () => {
    const store = new InboundStore(kv, { maxPerSession: 10 });
    const { key } = await store.append(origin, SESSION, [inboundMessage("1")], new Set());
    await store.remove(key, "1");
    expect(await store.read(key)).toBeNull();
    expect(await store.keys()).toEqual([]);

    await store.append(origin, SESSION, [inboundMessage("2")], new Set());
    const stale = await kv.get(key);
    await store.append(origin, SESSION, [inboundMessage("3")], new Set());
    // A delete made against the revision before "3" arrived must not take "3" with it.
    await expect(kv.delete(key, stale!.revision)).rejects.toMatchObject({ code: "CONFLICT" });
    await store.remove(key, "2");
    expect(await eventIds(store, key)).toEqual(["3"]);
  });

  it("removes with the revision the caller read, and falls back to reading when it changed", async () => {
    const store = new InboundStore(kv, { maxPerSession: 10 });
    const { key } = await store.append(origin, SESSION, [inboundMessage("1"), inboundMessage("2")], new Set());
    const seen = (await store.read(key))!;
    await store.remove(key, "1", seen);
    expect(await eventIds(store, key)).toEqual(["2"]);
    // `seen` is stale now: "2" is removed after a fresh read, and "3", appended since, stays.
    await store.append(origin, SESSION, [inboundMessage("3")], new Set());
    await store.remove(key, "2", seen);
    expect(await eventIds(store, key)).toEqual(["3"]);
  });

  it("survives a reopen of the store", async () => {
    const store = new InboundStore(kv, { maxPerSession: 10 });
    const { key } = await store.append(origin, SESSION, [inboundMessage("1"), inboundMessage("2")], new Set());
    await durable.close();
    durable = await createFileDurableStore(dir);
    const reopened = new InboundStore(await durable.kv("delivery_inbound"), { maxPerSession: 10 });
    const read = await reopened.read(key);
    expect(read?.queue).toMatchObject({ channelId: "tg", accountId: "default", sessionKey: SESSION });
    expect(read?.queue.items.map((i) => i.message.eventId)).toEqual(["1", "2"]);
  });
});
