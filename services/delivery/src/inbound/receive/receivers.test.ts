import { waitUntil } from "@gw/testing";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@gw/runtime";
import { createFileDurableStore, createMemoryFastStore, type DurableStore, type FastStore, type LeaseStore } from "@gw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemorySink, MessageLog, receiverDirectory } from "../../../test/memory-receiver.js";
import { StatusBook } from "../../status-book.js";
import { receiverKey } from "./account-receiver.js";
import { ReceiverCursors } from "./receiver-cursors.js";
import { type Receivers, startReceivers } from "./receivers.js";

const logger = createLogger({ service: "test", level: "silent" });
const TIMING = { ttlMs: 600, renewEveryMs: 150, acquireEveryMs: 60, backoffBaseMs: 20, backoffMaxMs: 100, healthyAfterMs: 60_000 };

/** A FastStore whose leases can be cut off, as for a replica that lost Redis or froze. */
function cuttable(inner: FastStore): { store: FastStore; cut(): void } {
  let cut = false;
  const guard = <T>(op: () => Promise<T>) => (cut ? Promise.reject(new Error("redis is gone")) : op());
  const leases: LeaseStore = {
    acquire: (k, h, t) => guard(() => inner.leases.acquire(k, h, t)),
    renew: (k, h, t) => guard(() => inner.leases.renew(k, h, t)),
    release: (k, h) => guard(() => inner.leases.release(k, h)),
    holder: (k) => guard(() => inner.leases.holder(k)),
  };
  return { store: { ...inner, leases }, cut: () => (cut = true) };
}

describe("inbound receivers", () => {
  let fast: FastStore;
  let durable: DurableStore;
  const started: Receivers[] = [];

  beforeEach(async () => {
    fast = createMemoryFastStore();
    durable = await createFileDurableStore(mkdtempSync(join(tmpdir(), "receivers-")));
  });
  afterEach(async () => {
    for (const r of started.splice(0)) await r.stop();
    await durable.close();
    await fast.close();
  });

  async function replica(replicaId: string, logs: Record<string, MessageLog | undefined>, sink: MemorySink, store = fast) {
    const receivers = await startReceivers({ directory: receiverDirectory(logs), sink, fastStore: store, durable, logger, replicaId, timing: TIMING });
    started.push(receivers);
    return receivers;
  }

  it("reads each account on one replica only, stores every message once, and the cursor after it", async () => {
    const log = new MessageLog();
    const sinkA = new MemorySink();
    const sinkB = new MemorySink();
    const a = await replica("a", { tg: log }, sinkA);
    await replica("b", { tg: log }, sinkB);
    expect(a.accounts).toEqual(["tg:default"]);
    for (let i = 0; i < 10; i++) log.write(`hello ${i}`);
    await waitUntil(() => sinkA.accepted.length + sinkB.accepted.length === 10, { what: "all ten stored", timeoutMs: 5_000 });
    await new Promise((r) => setTimeout(r, TIMING.ttlMs));
    expect(log.maxActive).toBe(1);
    expect([...sinkA.eventIds(), ...sinkB.eventIds()]).toEqual(log.messages.map((m) => m.eventId));
    const cursors = await ReceiverCursors.open(durable);
    expect((await cursors.read(receiverKey({ channelId: "tg", accountId: "default" })))?.cursor).toBe("10");
  });

  it("hands the account to another replica when the holder stops, resuming from the stored cursor", async () => {
    const log = new MessageLog();
    const sink = new MemorySink();
    const a = await replica("a", { tg: log }, sink);
    await waitUntil(() => log.active === 1, { what: "a reads", timeoutMs: 5_000 });
    log.write("one");
    log.write("two");
    await waitUntil(() => sink.accepted.length === 2, { what: "two stored", timeoutMs: 5_000 });
    await replica("b", { tg: log }, sink);
    await a.stop();
    started.splice(started.indexOf(a), 1);
    await waitUntil(() => log.startedFrom.length === 2 && log.active === 1, { what: "b reads", timeoutMs: 5_000 });
    expect(log.startedFrom[1]).toBe("2");
    log.write("three");
    await waitUntil(() => sink.accepted.length === 3, { what: "three stored", timeoutMs: 5_000 });
    expect(sink.eventIds()).toEqual(["e1", "e2", "e3"]);
  });

  it("takes over from a holder that lost its lease within the lease's TTL, and fences the old holder out", async () => {
    const log = new MessageLog();
    const sink = new MemorySink();
    const frozen = cuttable(fast);
    await replica("a", { tg: log }, sink, frozen.store);
    await waitUntil(() => log.active === 1, { what: "a reads", timeoutMs: 5_000 });
    log.write("one");
    await waitUntil(() => sink.accepted.length === 1, { what: "one stored", timeoutMs: 5_000 });
    await replica("b", { tg: log }, sink);
    // a can no longer renew: its lease lapses, b takes over, a must stop reading.
    const cutAt = Date.now();
    frozen.cut();
    await waitUntil(() => log.startedFrom.length === 2, { what: "b took over", timeoutMs: 5_000 });
    expect(Date.now() - cutAt).toBeLessThan(TIMING.ttlMs + TIMING.acquireEveryMs * 2 + 1_500);
    await waitUntil(() => log.active === 1, { what: "a stopped reading", timeoutMs: 5_000 });
    expect(log.startedFrom[1]).toBe("1");
    log.write("two");
    await waitUntil(() => sink.accepted.length === 2, { what: "two stored", timeoutMs: 5_000 });
    expect(sink.eventIds()).toEqual(["e1", "e2"]);
    expect(log.maxActive).toBe(1);
  });

  it("does not move the cursor when the sink fails, so the batch is read again", async () => {
    const log = new MessageLog();
    const sink = new MemorySink();
    sink.script.push(new Error("jetstream is down"), new Error("jetstream is down"));
    await replica("a", { tg: log }, sink);
    log.write("one");
    await waitUntil(() => sink.accepted.length === 1, { what: "stored after two failures", timeoutMs: 5_000 });
    expect(log.startedFrom).toEqual([undefined, undefined, undefined]);
    expect(sink.eventIds()).toEqual(["e1"]);
    const status = await new StatusBook(fast).read("tg", "default");
    expect(status.lastError).toContain("jetstream is down");
  });

  it("keeps one account's failures to itself", async () => {
    const broken = new MessageLog();
    const healthy = new MessageLog();
    for (let i = 0; i < 50; i++) broken.failures.push(new Error("401: Unauthorized"));
    const sink = new MemorySink();
    await replica("a", { bad: broken, good: healthy }, sink);
    healthy.write("still here");
    await waitUntil(() => sink.eventIds("good").length === 1, { what: "the healthy account delivers", timeoutMs: 5_000 });
    await waitUntil(async () => (await new StatusBook(fast).read("bad", "default")).lastError !== "", { what: "the failure is in channels.status", timeoutMs: 5_000 });
    expect((await new StatusBook(fast).read("bad", "default")).lastError).toBe("inbound: 401: Unauthorized");
    expect((await new StatusBook(fast).read("good", "default")).lastError).toBe("");
    // Backed off: far fewer tries than a tight loop would make in this time.
    expect(broken.startedFrom.length).toBeLessThan(30);
  });

  it("starts nothing for accounts without a receiver and releases its leases on stop", async () => {
    const log = new MessageLog();
    const receivers = await replica("a", { tg: log, plain: undefined }, new MemorySink());
    expect(receivers.accounts).toEqual(["tg:default"]);
    const key = receiverKey({ channelId: "tg", accountId: "default" });
    await waitUntil(async () => (await fast.leases.holder(key)) !== null, { what: "lease taken", timeoutMs: 5_000 });
    expect(await fast.leases.holder(key)).toMatch(/^a:/);
    await receivers.stop();
    started.splice(0);
    expect(await fast.leases.holder(key)).toBeNull();
    expect(log.active).toBe(0);
  });
});
