import { waitUntil } from "@gw/testing";
import { ChannelError } from "@gw/channels";
import type { DeliverySendRequest } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { createFileDurableStore, type DurableKv, type DurableStore, type FastStore, type KvEntry } from "@gw/store";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { setup } from "../../test/scripted-channel.js";
import { Outbox } from "./outbox.js";

const logger = createLogger({ service: "test", level: "silent" });
const makeTempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const stores: DurableStore[] = [];
const outboxes: Outbox[] = [];

async function durable(dir: string): Promise<DurableStore> {
  const store = await createFileDurableStore(dir);
  stores.push(store);
  return store;
}

function message(over: Partial<DeliverySendRequest> = {}): DeliverySendRequest {
  return {
    channel: "",
    to: "42",
    text: "an agent's answer",
    mediaUrls: [],
    gifPlayback: false,
    accountId: "",
    threadId: "",
    sessionKey: "",
    idempotencyKey: `run:${Math.random()}`,
    ...over,
  };
}

/** A gate a test opens when it wants: what waits on it stays stalled until then. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A replica paused after reading a job (a long GC pause, a frozen VM): its reads and renewals wait for `wake`. */
function stalledAfterRead(kv: DurableKv, store: FastStore) {
  const { open: wake, opened: woken } = gate();
  let reads = 0;
  const stalledKv: DurableKv = {
    get: async (key): Promise<KvEntry | null> => {
      const entry = await kv.get(key);
      reads++;
      await woken;
      return entry;
    },
    put: (key, value) => kv.put(key, value),
    create: (key, value) => kv.create(key, value),
    update: (key, value, revision) => kv.update(key, value, revision),
    delete: (key, revision) => kv.delete(key, revision),
    keys: () => kv.keys(),
  };
  const leases = { ...store.leases, renew: async (key: string, holder: string, ttlMs: number) => woken.then(() => store.leases.renew(key, holder, ttlMs)) };
  return { kv: stalledKv, store: { ...store, leases }, wake, reads: () => reads };
}

afterEach(async () => {
  for (const o of outboxes.splice(0)) await o.stop();
  for (const s of stores.splice(0)) await s.close();
});

describe("Outbox", () => {
  it("keeps a job until the platform took it, and takes a repeated key once", async () => {
    const dir = makeTempDir("outbox-");
    const { adapter, dispatcher, store } = setup({ pacing: "off" });
    const kv = await (await durable(dir)).kv("delivery_outbox");
    const outbox = new Outbox({ kv, store, dispatcher, logger }, { replicaId: "a", retryForMs: 60_000, leaseMs: 1_000, scanEveryMs: 50 });
    outboxes.push(outbox);
    outbox.start();
    const job = message();
    const first = await outbox.enqueue(job, "run:1");
    expect(await outbox.enqueue(job, "run:1")).toEqual({ jobId: first.jobId, duplicate: true });
    await waitUntil(() => adapter.sent.length === 1, { timeoutMs: 5_000 });
    // The job goes from the store once the platform took it, just after the send returns.
    await waitUntil(async () => (await outbox.pending()) === 0, { timeoutMs: 5_000 });
    expect(adapter.sent).toHaveLength(1);
  });

  it("retries a transient failure later and drops a permanent one", async () => {
    const dir = makeTempDir("outbox-");
    const { adapter, dispatcher, store } = setup({ pacing: "off" });
    const kv = await (await durable(dir)).kv("delivery_outbox");
    const outbox = new Outbox({ kv, store, dispatcher, logger }, { replicaId: "a", retryForMs: 60_000, leaseMs: 1_000, scanEveryMs: 50 });
    outboxes.push(outbox);
    const down = () => new ChannelError("unavailable", "502");
    adapter.script.push(down(), down(), down()); // maxAttempts is 3: the first job attempt fails
    outbox.start();
    await outbox.enqueue(message({ text: "retried" }), "run:2");
    await waitUntil(() => adapter.sent.length === 1, { timeoutMs: 8_000 });
    await waitUntil(async () => (await outbox.pending()) === 0, { timeoutMs: 5_000 });

    adapter.script.push(new ChannelError("rejected", "Bad Request: chat not found", { status: 400 }));
    await outbox.enqueue(message({ text: "refused" }), "run:3");
    await waitUntil(() => adapter.script.length === 0, { timeoutMs: 5_000 });
    await waitUntil(async () => (await outbox.pending()) === 0, { timeoutMs: 5_000 });
    expect(adapter.sent.map((m) => ("text" in m ? m.text : ""))).toEqual(["retried"]);
  });

  it("drops a corrupt stored job with a logged error and still delivers the others", async () => {
    const dir = makeTempDir("outbox-");
    const { adapter, dispatcher, store } = setup({ pacing: "off" });
    const kv = await (await durable(dir)).kv("delivery_outbox");
    const lines: string[] = [];
    const said = createLogger({ service: "test", level: "error", destination: { write: (line: string) => lines.push(line) } });
    const outbox = new Outbox({ kv, store, dispatcher, logger: said }, { replicaId: "a", retryForMs: 60_000, leaseMs: 1_000, scanEveryMs: 50 });
    outboxes.push(outbox);
    await kv.put("not-json", Buffer.from("{half a job"));
    await kv.put("not-a-job", Buffer.from(JSON.stringify({ request: 7, origin: "run:x" })));
    await kv.put("not-a-request", Buffer.from(JSON.stringify({ request: Buffer.from([0x0a, 0xff, 0x01]).toString("base64"), origin: "run:y", acceptedAt: 0, attempts: 0, nextAttemptAt: 0 })));
    await outbox.enqueue(message({ text: "still sent" }), "run:5");
    outbox.start();
    await waitUntil(async () => adapter.sent.length === 1 && (await outbox.pending()) === 0, { timeoutMs: 5_000, what: "every job gone" });
    expect(adapter.sent[0]).toMatchObject({ text: "still sent" });
    const dropped = lines.map((line) => JSON.parse(line) as { msg: string; jobId: string; problem: string });
    expect(dropped.map((d) => [d.msg, d.jobId]).sort()).toEqual([
      ["a corrupt outbox job is dropped", "not-a-job"],
      ["a corrupt outbox job is dropped", "not-a-request"],
      ["a corrupt outbox job is dropped", "not-json"],
    ]);
    expect(dropped.find((d) => d.jobId === "not-a-job")?.problem).toContain("record.request");
  });

  it("survives a restart with jobs waiting", async () => {
    const dir = makeTempDir("outbox-");
    const first = setup({ pacing: "off" });
    // A process that accepts the job and dies before working it (stopped: it works nothing).
    const before = new Outbox(
      { kv: await (await durable(dir)).kv("delivery_outbox"), store: first.store, dispatcher: first.dispatcher, logger },
      { replicaId: "dead", retryForMs: 60_000, leaseMs: 1_000 },
    );
    await before.stop();
    await before.enqueue(message({ text: "waited for a restart" }), "run:4");
    await stores.splice(0).reduce((p, s) => p.then(() => s.close()), Promise.resolve());

    const after = setup({ pacing: "off" });
    const outbox = new Outbox(
      { kv: await (await durable(dir)).kv("delivery_outbox"), store: after.store, dispatcher: after.dispatcher, logger },
      { replicaId: "b", retryForMs: 60_000, leaseMs: 1_000, scanEveryMs: 50 },
    );
    outboxes.push(outbox);
    outbox.start();
    await waitUntil(() => after.adapter.sent.length === 1, { timeoutMs: 5_000 });
    expect(after.adapter.sent[0]).toMatchObject({ text: "waited for a restart" });
  });

  it("takes over a job whose holder died once its lease lapses", async () => {
    const dir = makeTempDir("outbox-");
    const shared = setup({ pacing: "off" });
    const kv = await (await durable(dir)).kv("delivery_outbox");
    const job = message({ text: "orphaned" });
    const jobId = Outbox.jobId(job.idempotencyKey);
    // The dead holder's lease, still running for 300 ms.
    expect(await shared.store.leases.acquire(`delivery:outbox:${jobId}`, "dead", 300)).toBe(true);
    const dead = new Outbox({ kv, store: shared.store, dispatcher: shared.dispatcher, logger }, { replicaId: "dead", retryForMs: 60_000, leaseMs: 1_000 });
    await dead.stop();
    await dead.enqueue(job, "run:5");
    const survivor = new Outbox({ kv, store: shared.store, dispatcher: shared.dispatcher, logger }, { replicaId: "b", retryForMs: 60_000, leaseMs: 1_000, scanEveryMs: 50 });
    outboxes.push(survivor);
    const started = Date.now();
    survivor.start();
    await waitUntil(() => shared.adapter.sent.length === 1, { timeoutMs: 5_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it("sends nothing from a replica that wakes from a stall after its job's lease passed to another, and leaves that lease alone", async () => {
    const dir = makeTempDir("outbox-");
    const shared = setup({ pacing: "off" });
    const kv = await (await durable(dir)).kv("delivery_outbox");
    const job = message({ text: "once" });
    const leaseKey = `delivery:outbox:${Outbox.jobId(job.idempotencyKey)}`;

    const stalled = stalledAfterRead(kv, shared.store);
    let sendsByA = 0;
    const a = new Outbox(
      { kv: stalled.kv, store: stalled.store, dispatcher: { send: (r) => (sendsByA++, shared.dispatcher.send(r)) }, logger },
      { replicaId: "a", retryForMs: 60_000, leaseMs: 300 },
    );
    outboxes.push(a);
    await a.enqueue(job, "run:6");
    await waitUntil(() => stalled.reads() === 1, { timeoutMs: 5_000 });

    // B takes the job once A's lease lapsed, and is still sending when A wakes.
    const bSending = gate();
    let sendsByB = 0;
    const b = new Outbox(
      { kv, store: shared.store, dispatcher: { send: async (r) => (sendsByB++, await bSending.opened, shared.dispatcher.send(r)) }, logger },
      { replicaId: "b", retryForMs: 60_000, leaseMs: 5_000, scanEveryMs: 50 },
    );
    outboxes.push(b);
    b.start();
    await waitUntil(() => sendsByB === 1, { timeoutMs: 5_000 });
    stalled.wake();
    await a.stop();
    expect(sendsByA).toBe(0);
    expect(await shared.store.leases.holder(leaseKey)).toMatch(/^b:/);

    bSending.open();
    await waitUntil(async () => (await b.pending()) === 0, { timeoutMs: 5_000 });
    expect(shared.adapter.sent.map((m) => ("text" in m ? m.text : ""))).toEqual(["once"]);
  });
});
