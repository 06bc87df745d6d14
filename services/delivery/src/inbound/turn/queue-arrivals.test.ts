import { createSubjects, InProcessBus } from "@gw/bus";
import { DEFAULT_QUEUE, type QueueMode } from "@gw/config";
import { RunAbort } from "@gw/contracts";
import { RunRegistry } from "@gw/runs";
import { createLogger } from "@gw/runtime";
import { createFileDurableStore, createMemoryFastStore, type DurableStore } from "@gw/store";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inboundMessage } from "../../../test/inbound-fixtures.js";
import { InboundStore } from "../store/inbound-store.js";
import { planTurn } from "./pending-queue.js";
import { QueueArrivals } from "./queue-arrivals.js";

const origin = { channelId: "tg", accountId: "default" };
const RUN = "in:tg:default:1";
let durable: DurableStore;
let store: InboundStore;
let registry: RunRegistry;
let aborted: string[];
let arrivals: (mode: QueueMode) => QueueArrivals;

beforeEach(async () => {
  durable = await createFileDurableStore(mkdtempSync(join(tmpdir(), "queue-arrivals-")));
  store = new InboundStore(await durable.kv("delivery_inbound"), { maxPerSession: 100 });
  registry = new RunRegistry(createMemoryFastStore());
  const bus = new InProcessBus();
  const subjects = createSubjects("t");
  aborted = [];
  bus.subscribe(subjects.broadcast("run.abort"), (data) => void aborted.push(RunAbort.decode(data).runId));
  const logger = createLogger({ service: "test", level: "silent" });
  arrivals = (mode) => new QueueArrivals({ store, registry, bus, subjects, logger, queueOf: () => ({ ...DEFAULT_QUEUE, mode }) });
});
afterEach(async () => {
  await durable.close();
});

/** A session whose turn (message 1) runs, and message 2 just stored behind it. */
async function runningWithOneWaiting(): Promise<string> {
  const { key } = await store.append(origin, "tg:42", [inboundMessage("1")], new Set());
  const read = (await store.read(key))!;
  await store.replace(read, planTurn(read.queue, "collect")!.tagged!);
  await store.append(origin, "tg:42", [inboundMessage("2")], new Set());
  return key;
}

describe("QueueArrivals", () => {
  it("steer: tags the waiting message with the running turn and hands it to the run's inbox, once", async () => {
    const key = await runningWithOneWaiting();
    await arrivals("steer").arrived(key, origin, inboundMessage("2"));
    await arrivals("steer").arrived(key, origin, inboundMessage("2"));
    expect((await store.read(key))!.queue.items.map((i) => [i.turn, i.steer])).toEqual([
      [RUN, undefined],
      [undefined, RUN],
    ]);
    expect(await registry.inbox.read(RUN)).toEqual([expect.objectContaining({ id: "2", kind: "steer", text: "message 2" })]);
    expect(aborted).toEqual([]);
  });

  it("interrupt: names the running turn on the record and asks its run to stop, once", async () => {
    const key = await runningWithOneWaiting();
    await arrivals("interrupt").arrived(key, origin, inboundMessage("2"));
    await arrivals("interrupt").arrived(key, origin, inboundMessage("2"));
    expect((await store.read(key))!.queue.interrupt).toBe(RUN);
    expect(aborted).toEqual([RUN]);
    expect(await registry.abortRequested(RUN)).toBe(true);
  });

  it("followup and collect leave the running turn alone", async () => {
    const key = await runningWithOneWaiting();
    const before = await store.read(key);
    for (const mode of ["followup", "collect"] as const) await arrivals(mode).arrived(key, origin, inboundMessage("2"));
    expect((await store.read(key))!.revision).toBe(before!.revision);
    expect(await registry.inbox.read(RUN)).toEqual([]);
    expect(aborted).toEqual([]);
  });

  it("with no turn running, a message only waits (it will be the next turn)", async () => {
    const { key } = await store.append(origin, "tg:42", [inboundMessage("1")], new Set());
    await arrivals("steer").arrived(key, origin, inboundMessage("1"));
    await arrivals("interrupt").arrived(key, origin, inboundMessage("1"));
    expect((await store.read(key))!.queue.items.map((i) => [i.turn, i.steer])).toEqual([[undefined, undefined]]);
    expect(aborted).toEqual([]);
  });
});
