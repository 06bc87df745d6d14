import { callRpc, createSubjects, InProcessBus } from "@gw/bus";
import { RPC, type SessionsPreviewResponse } from "@gw/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { partitionOf } from "./partition.js";
import { ownerOf } from "./partition-owners.js";
import { PartitionRouter } from "./partition-routing.js";

const subjects = createSubjects("t");
const PARTITIONS = 16;

/** A sessions replica reduced to its routing: it answers previews with its own name. */
function replica(bus: InProcessBus, name: string, handled: string[]) {
  const router = new PartitionRouter({ bus, subjects, partitions: PARTITIONS });
  const stop = router
    .keyed(RPC.sessionsPreview, async (req): Promise<SessionsPreviewResponse> => {
      handled.push(`${name}:${req.key}`);
      return { viewJson: Buffer.from(JSON.stringify({ by: name })) };
    })
    .serve();
  router.start();
  return {
    stop: () => {
      router.stop();
      stop();
    },
  };
}

const servedBy = async (bus: InProcessBus, key: string) => {
  const res = await callRpc(bus, subjects, RPC.sessionsPreview, { key, limit: 1 }, { timeoutMs: 1_000 });
  return (JSON.parse(Buffer.from(res.viewJson).toString()) as { by: string }).by;
};

describe("partition ownership", () => {
  let stops: Array<() => void> = [];
  afterEach(() => {
    for (const stop of stops) stop();
    stops = [];
  });

  it("gives every partition one owner, the same whoever computes it, and moves few when one joins", () => {
    const three = ["a", "b", "c"];
    const owners = Array.from({ length: 64 }, (_, p) => ownerOf(p, three));
    expect(new Set(owners)).toEqual(new Set(three));
    expect(Array.from({ length: 64 }, (_, p) => ownerOf(p, ["c", "a", "b"]))).toEqual(owners);
    const four = Array.from({ length: 64 }, (_, p) => ownerOf(p, [...three, "d"]));
    // Only partitions the newcomer takes change hands.
    four.forEach((owner, p) => expect(owner === "d" || owner === owners[p]).toBe(true));
  });

  it("sends each session's requests to one replica, and to the others once it leaves", async () => {
    const bus = new InProcessBus();
    const handled: string[] = [];
    const a = replica(bus, "a", handled);
    const b = replica(bus, "b", handled);
    stops.push(a.stop, b.stop);
    // The announcements crossed: both know both.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    const first = new Map<string, string>();
    for (const key of keys) first.set(key, await servedBy(bus, key));
    // Back to back, so the usual subject's round robin hands each key to both replicas in turn.
    for (const key of keys) for (let i = 0; i < 3; i++) expect(await servedBy(bus, key)).toBe(first.get(key));
    expect(new Set(first.values())).toEqual(new Set(["a", "b"]));
    // Keys of one partition share their owner.
    const byPartition = new Map<number, string>();
    for (const key of keys) {
      const p = partitionOf(key, PARTITIONS);
      expect(byPartition.get(p) ?? first.get(key)).toBe(first.get(key));
      byPartition.set(p, first.get(key)!);
    }
    a.stop();
    for (const key of keys) expect(await servedBy(bus, key)).toBe("b");
    await bus.close();
  });
});
