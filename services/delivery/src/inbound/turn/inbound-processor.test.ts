import { waitUntil } from "@gw/testing";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_QUEUE, type QueueMode } from "@gw/config";
import { createLogger } from "@gw/runtime";
import { createFileDurableStore, createMemoryFastStore, type DurableStore, type FastStore } from "@gw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inboundMessage } from "../../../test/inbound-fixtures.js";
import { StatusBook } from "../../status-book.js";
import { AnsweredEvents } from "../store/answered-events.js";
import { InboundProcessor } from "./inbound-processor.js";
import { InboundStore, type QueuedMessage, type QueueRead } from "../store/inbound-store.js";
import type { PlannedTurn } from "./pending-queue.js";

const logger = createLogger({ service: "test", level: "silent" });
const origin = { channelId: "tg", accountId: "default" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A turn that records who took which message when, and takes `slowMs` for messages saying "slow". */
class RecordingTurn {
  readonly taken: Array<{ replica: string; session: string; eventId: string }> = [];
  /** Each turn's messages, in the order the turns were taken. */
  readonly turns: string[][] = [];
  readonly gaveUp: string[] = [];
  private readonly running = new Set<string>();
  overlapped = false;
  /** The most sessions taken at once. */
  peak = 0;
  failNext = 0;

  constructor(
    private readonly slowMs = 300,
    private readonly mode: QueueMode = "followup",
  ) {}

  forReplica(replica: string) {
    return {
      queueOf: () => ({ ...DEFAULT_QUEUE, mode: this.mode }),
      take: async (read: QueueRead, turn: PlannedTurn) => {
        if (this.failNext > 0) {
          this.failNext--;
          throw new Error("the bus is away");
        }
        const session = read.queue.sessionKey;
        if (this.running.has(session)) this.overlapped = true;
        this.running.add(session);
        this.peak = Math.max(this.peak, this.running.size);
        await sleep(turn.items.some((item) => item.message.text.includes("slow")) ? this.slowMs : 5);
        this.running.delete(session);
        for (const item of turn.items) this.taken.push({ replica, session, eventId: item.message.eventId });
        this.turns.push(turn.items.map((item) => item.message.eventId));
        return { steered: [], aborted: false };
      },
      giveUp: async (_read: QueueRead, item: QueuedMessage) => void this.gaveUp.push(item.message.eventId),
    };
  }

  order(session: string): string[] {
    return this.taken.filter((t) => t.session === session).map((t) => t.eventId);
  }
}

let durable: DurableStore;
let fastStore: FastStore;
const processors: InboundProcessor[] = [];

beforeEach(async () => {
  durable = await createFileDurableStore(mkdtempSync(join(tmpdir(), "inbound-processor-")));
  fastStore = createMemoryFastStore();
});
afterEach(async () => {
  for (const p of processors.splice(0)) await p.stop(500);
  await durable.close();
  await fastStore.close();
});

interface ReplicaOptions {
  leaseMs?: number;
  scanEveryMs?: number;
  retryForMs?: number;
  /** Where this replica holds its leases (default: the shared store). */
  leases?: FastStore["leases"];
}

async function replica(name: string, turn: RecordingTurn, opts: ReplicaOptions = {}) {
  const store = new InboundStore(await durable.kv("delivery_inbound"), { maxPerSession: 100 });
  const leased = { ...fastStore, leases: opts.leases ?? fastStore.leases };
  const processor = new InboundProcessor(
    { store, answered: new AnsweredEvents(fastStore, 60_000), turn: turn.forReplica(name), fastStore: leased, status: new StatusBook(fastStore), logger },
    { replicaId: name, leaseMs: opts.leaseMs ?? 1_000, retryForMs: opts.retryForMs ?? 60_000, scanEveryMs: opts.scanEveryMs ?? 100 },
  );
  processors.push(processor);
  return { store, processor };
}

async function post(r: { store: InboundStore; processor: InboundProcessor }, session: string, eventId: string, text = `message ${eventId}`) {
  const { key, added } = await r.store.append(origin, session, [inboundMessage(eventId, { text })], new Set());
  if (added > 0) r.processor.kick(key);
  return key;
}

describe("InboundProcessor", () => {
  it("answers messages that arrive during a slow turn afterwards, in arrival order, one at a time", async () => {
    const turn = new RecordingTurn();
    const r = await replica("a", turn);
    await post(r, "tg:42", "1", "slow one");
    for (const id of ["2", "3", "4", "5", "6"]) await post(r, "tg:42", id);
    await waitUntil(() => turn.taken.length === 6, { timeoutMs: 10_000 });
    expect(turn.order("tg:42")).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect(turn.overlapped).toBe(false);
    // Taken off the store once done: nothing is left for a restart to answer again.
    await waitUntil(async () => (await r.store.keys()).length === 0, { timeoutMs: 10_000 });
  });

  it("collect: the messages that arrived during a turn are the next turn, together, and leave the store", async () => {
    const turn = new RecordingTurn(300, "collect");
    const r = await replica("a", turn);
    await post(r, "tg:42", "1", "slow one");
    await waitUntil(() => turn.peak === 1, { timeoutMs: 10_000 });
    for (const id of ["2", "3", "4"]) await post(r, "tg:42", id);
    await waitUntil(() => turn.taken.length === 4, { timeoutMs: 10_000 });
    expect(turn.turns).toEqual([["1"], ["2", "3", "4"]]);
    await waitUntil(async () => (await r.store.keys()).length === 0, { timeoutMs: 10_000 });
  });

  it("collect: a turn tagged before a crash is taken up again with exactly its messages", async () => {
    const turn = new RecordingTurn(5, "collect");
    const r = await replica("a", turn, { scanEveryMs: 60_000 });
    const key = await r.store.append(origin, "tg:7", [inboundMessage("1"), inboundMessage("2")], new Set()).then((a) => a.key);
    // As a dead replica left it: messages 1 and 2 tagged with its turn, 3 stored after.
    await r.store.change(key, (q) => ({ ...q, items: q.items.map((item) => ({ ...item, turn: "in:tg:default:1" })) }));
    await post(r, "tg:7", "3");
    await waitUntil(() => turn.taken.length === 3, { timeoutMs: 10_000 });
    expect(turn.turns).toEqual([["1", "2"], ["3"]]);
  });

  it("works different sessions side by side", async () => {
    const turn = new RecordingTurn(400);
    const r = await replica("a", turn);
    await Promise.all(["tg:1", "tg:2", "tg:3"].map((session) => post(r, session, `${session}-1`, "slow")));
    await waitUntil(() => turn.taken.length === 3, { timeoutMs: 10_000 });
    expect(turn.peak).toBe(3);
  });

  it("takes each message once, in order, when two replicas share the store", async () => {
    const turn = new RecordingTurn(50);
    const a = await replica("a", turn);
    const b = await replica("b", turn);
    const sessions = ["tg:1", "tg:2", "tg:3", "tg:4"];
    for (let i = 0; i < 10; i++) {
      for (const session of sessions) await post(i % 2 === 0 ? a : b, session, `${session}#${i}`, i % 3 === 0 ? "slow" : "fast");
    }
    await waitUntil(() => turn.taken.length === 40, { timeoutMs: 10_000 });
    await sleep(300);
    expect(turn.taken).toHaveLength(40);
    for (const session of sessions) expect(turn.order(session)).toEqual(Array.from({ length: 10 }, (_, i) => `${session}#${i}`));
    expect(turn.overlapped).toBe(false);
  });

  it("resumes a dead replica's session once its lease lapses", async () => {
    const turn = new RecordingTurn();
    const survivor = await replica("b", turn, { leaseMs: 400, scanEveryMs: 50 });
    const key = InboundStore.queueKey(origin, "tg:42");
    // The dead replica took the session's lease and stored two messages, then died.
    expect(await fastStore.leases.acquire(`delivery:inbound:${key}`, "dead", 400)).toBe(true);
    await survivor.store.append(origin, "tg:42", [inboundMessage("1"), inboundMessage("2")], new Set());
    survivor.processor.start();
    await sleep(200);
    expect(turn.taken).toEqual([]);
    await waitUntil(() => turn.taken.length === 2, { timeoutMs: 10_000 });
    expect(turn.order("tg:42")).toEqual(["1", "2"]);
  });

  it("takes no further message on a replica whose renewals stalled until its lease passed to another", async () => {
    const turn = new RecordingTurn(800);
    // A's renewals never get through (a partition between A and the store): its lease lapses mid-turn.
    const stalled = { ...fastStore.leases, renew: () => new Promise<boolean>(() => undefined) };
    const a = await replica("a", turn, { leaseMs: 300, leases: stalled });
    const b = await replica("b", turn, { leaseMs: 5_000, scanEveryMs: 50 });
    await post(a, "tg:42", "1", "slow");
    await a.store.append(origin, "tg:42", [inboundMessage("2")], new Set());
    b.processor.start();
    await waitUntil(() => turn.taken.filter((t) => t.replica === "b").length === 2, { timeoutMs: 10_000 });
    await waitUntil(() => a.processor.busy() === 0, { timeoutMs: 10_000 });
    // A finished the turn it had started (the same run: InboundTurn follows it, answering once), then stopped.
    expect(turn.taken.filter((t) => t.replica === "a").map((t) => t.eventId)).toEqual(["1"]);
    expect(turn.taken.filter((t) => t.replica === "b").map((t) => t.eventId)).toEqual(["1", "2"]);
  });

  it("keeps a message whose turn failed on the gateway's side and tries it again", async () => {
    const turn = new RecordingTurn();
    turn.failNext = 1;
    const r = await replica("a", turn, { scanEveryMs: 50 });
    r.processor.start();
    await post(r, "tg:42", "1");
    await post(r, "tg:42", "2");
    await waitUntil(() => turn.taken.length === 2, { timeoutMs: 5_000 });
    expect(turn.order("tg:42")).toEqual(["1", "2"]);
  });

  it("drops a message whose turn keeps failing past retryForMs, tells its sender, and goes on with the next", async () => {
    const turn = new RecordingTurn();
    turn.failNext = 3;
    const r = await replica("a", turn, { scanEveryMs: 50, retryForMs: 1_500 });
    r.processor.start();
    await post(r, "tg:42", "1");
    await post(r, "tg:42", "2");
    await waitUntil(() => turn.taken.length === 1, { timeoutMs: 10_000 });
    expect(turn.gaveUp).toEqual(["1"]);
    expect(turn.order("tg:42")).toEqual(["2"]);
  });

  it("skips a message whose turn is already over (answered before a crash)", async () => {
    const turn = new RecordingTurn();
    const r = await replica("a", turn);
    await new AnsweredEvents(fastStore, 60_000).mark(["in:tg:default:1"], "in:tg:default:1");
    await post(r, "tg:42", "1");
    await post(r, "tg:42", "2");
    await waitUntil(() => turn.taken.length === 1, { timeoutMs: 10_000 });
    await waitUntil(async () => (await r.store.keys()).length === 0, { timeoutMs: 10_000 });
    expect(turn.order("tg:42")).toEqual(["2"]);
  });

  it("stops within its grace while a turn still waits for its run, leaving the message stored", async () => {
    const turn = new RecordingTurn(60_000);
    const r = await replica("a", turn);
    const key = await post(r, "tg:42", "1", "slow");
    await sleep(50);
    // The turn waits a minute: stop() returning at all is the grace at work.
    await r.processor.stop(200);
    expect(await r.store.keys()).toEqual([key]);
  });
});
