import { waitFor } from "@gw/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectGatewayError, sleep, uniqueName } from "./contract-helpers.js";
import type { FastStore } from "./fast-store.js";

/** Expiry checks poll instead of sleeping a fixed time; this bounds how long they may take. */
const EXPIRY_BOUND = { timeoutMs: 3_000, intervalMs: 20 };

/**
 * The behaviour every FastStore must show. `factory` returns a fresh store whose keys no other
 * test sees (a new memory store, or a Redis store with a unique key prefix).
 */
export function describeFastStoreContract(name: string, factory: () => Promise<FastStore>): void {
  describe(`FastStore contract: ${name}`, () => {
    let store: FastStore;
    beforeEach(async () => {
      store = await factory();
    });
    afterEach(async () => {
      await store.close();
    });

    describe("idempotency", () => {
      it("hands out a key once, then reports pending, then the stored result", async () => {
        const key = uniqueName("send:");
        expect(await store.idempotency.lookup(key)).toEqual({ status: "new" });
        expect(await store.idempotency.begin(key, 5_000)).toEqual({ status: "new" });
        expect(await store.idempotency.begin(key, 5_000)).toEqual({ status: "pending" });
        expect(await store.idempotency.lookup(key)).toEqual({ status: "pending" });
        await store.idempotency.complete(key, '{"messageId":"m1"}', 5_000);
        expect(await store.idempotency.lookup(key)).toEqual({ status: "done", result: '{"messageId":"m1"}' });
        expect(await store.idempotency.begin(key, 5_000)).toEqual({
          status: "done",
          result: '{"messageId":"m1"}',
        });
      });

      it("gives 'new' to exactly one of 20 concurrent callers", async () => {
        const key = uniqueName("race:");
        const states = await Promise.all(
          Array.from({ length: 20 }, () => store.idempotency.begin(key, 5_000)),
        );
        expect(states.filter((s) => s.status === "new")).toHaveLength(1);
        expect(states.filter((s) => s.status === "pending")).toHaveLength(19);
      });

      it("lets a retry begin again after abandon(), but never drops a completed result", async () => {
        const key = uniqueName("fail:");
        await store.idempotency.begin(key, 5_000);
        await store.idempotency.abandon(key);
        expect(await store.idempotency.begin(key, 5_000)).toEqual({ status: "new" });
        await store.idempotency.complete(key, "ok", 5_000);
        await store.idempotency.abandon(key);
        expect(await store.idempotency.lookup(key)).toEqual({ status: "done", result: "ok" });
        await store.idempotency.abandon(uniqueName("never-begun:"));
      });

      it("extends a pending claim only, so a live holder keeps its key", async () => {
        const key = uniqueName("extend:");
        expect(await store.idempotency.extend(key, 5_000)).toBe(false);
        await store.idempotency.begin(key, 300);
        expect(await store.idempotency.extend(key, 5_000)).toBe(true);
        await new Promise((r) => setTimeout(r, 500));
        expect(await store.idempotency.lookup(key)).toEqual({ status: "pending" });
        await store.idempotency.complete(key, "r", 5_000);
        expect(await store.idempotency.extend(key, 100)).toBe(false);
        await new Promise((r) => setTimeout(r, 300));
        expect(await store.idempotency.lookup(key)).toEqual({ status: "done", result: "r" });
      });

      it("lets only a claim's own holder extend or abandon it, so a holder whose claim lapsed and was taken leaves the new one alone", async () => {
        const key = uniqueName("holder:");
        expect(await store.idempotency.begin(key, 200, "first")).toEqual({ status: "new" });
        expect(await store.idempotency.begin(key, 5_000, "second")).toEqual({ status: "pending" });
        await waitFor(async () => ((await store.idempotency.lookup(key)).status === "new" ? true : undefined), {
          ...EXPIRY_BOUND,
          what: "the first claim to lapse",
        });
        expect(await store.idempotency.begin(key, 5_000, "second")).toEqual({ status: "new" });
        // The first holder wakes up late: its heartbeat and its abandon after a failure change nothing.
        expect(await store.idempotency.extend(key, 5_000, "first")).toBe(false);
        await store.idempotency.abandon(key, "first");
        await store.idempotency.abandon(key);
        expect(await store.idempotency.begin(key, 5_000, "third")).toEqual({ status: "pending" });
        expect(await store.idempotency.extend(key, 5_000, "second")).toBe(true);
        await store.idempotency.abandon(key, "second");
        expect(await store.idempotency.begin(key, 5_000, "third")).toEqual({ status: "new" });
      });

      it("keeps results with any characters, including an empty result", async () => {
        const key = uniqueName("chars:");
        await store.idempotency.complete(key, "", 5_000);
        expect(await store.idempotency.lookup(key)).toEqual({ status: "done", result: "" });
        await store.idempotency.complete(key, "D P N\n🎉", 5_000);
        expect(await store.idempotency.lookup(key)).toEqual({ status: "done", result: "D P N\n🎉" });
      });

      it("forgets a pending claim and a completed result after their windows", async () => {
        const pending = uniqueName("pending:");
        const done = uniqueName("done:");
        await store.idempotency.begin(pending, 200);
        await store.idempotency.begin(done, 5_000);
        await store.idempotency.complete(done, "r", 200);
        await waitFor(
          async () => ((await store.idempotency.lookup(pending)).status === "new" ? true : undefined),
          {
            ...EXPIRY_BOUND,
            what: "the pending claim to expire",
          },
        );
        await waitFor(
          async () => ((await store.idempotency.lookup(done)).status === "new" ? true : undefined),
          {
            ...EXPIRY_BOUND,
            what: "the completed result to expire",
          },
        );
        expect(await store.idempotency.begin(pending, 5_000)).toEqual({ status: "new" });
      });

      it("rejects a window that is not a positive duration", async () => {
        await expectGatewayError(store.idempotency.begin("k", 0), "INVALID_REQUEST");
        await expectGatewayError(store.idempotency.complete("k", "r", -5), "INVALID_REQUEST");
      });
    });

    describe("counters", () => {
      it("counts hits in a fixed window started by the first hit", async () => {
        const key = uniqueName("ip:");
        expect(await store.counters.peek(key)).toEqual({ count: 0, resetInMs: 0 });
        const first = await store.counters.hit(key, 10_000);
        expect(first.count).toBe(1);
        expect(first.resetInMs).toBeGreaterThan(9_000);
        expect(first.resetInMs).toBeLessThanOrEqual(10_000);
        expect((await store.counters.hit(key, 10_000, 3)).count).toBe(4);
        const peeked = await store.counters.peek(key);
        expect(peeked.count).toBe(4);
        expect(peeked.resetInMs).toBeLessThanOrEqual(first.resetInMs);
      });

      it("does not extend the window on later hits", async () => {
        const key = uniqueName("fixed:");
        await store.counters.hit(key, 1_000);
        await sleep(300);
        const later = await store.counters.hit(key, 1_000);
        expect(later.count).toBe(2);
        expect(later.resetInMs).toBeLessThanOrEqual(750);
      });

      it("starts from zero once the window is over", async () => {
        const key = uniqueName("window:");
        await store.counters.hit(key, 200, 5);
        const reset = await waitFor(
          async () => {
            const c = await store.counters.peek(key);
            return c.count === 0 ? c : undefined;
          },
          { ...EXPIRY_BOUND, what: "the counter window to end" },
        );
        expect(reset).toEqual({ count: 0, resetInMs: 0 });
        const fresh = await store.counters.hit(key, 5_000);
        expect(fresh.count).toBe(1);
        expect(fresh.resetInMs).toBeGreaterThan(4_000);
      });

      it("reset() clears the count", async () => {
        const key = uniqueName("reset:");
        await store.counters.hit(key, 10_000, 7);
        await store.counters.reset(key);
        expect(await store.counters.peek(key)).toEqual({ count: 0, resetInMs: 0 });
        expect((await store.counters.hit(key, 10_000)).count).toBe(1);
      });

      it("counts every one of many concurrent hits", async () => {
        const key = uniqueName("burst:");
        const results = await Promise.all(Array.from({ length: 50 }, () => store.counters.hit(key, 10_000)));
        expect(results.map((r) => r.count).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 50 }, (_, i) => i + 1),
        );
      });

      it("gives hits back within the window, never below what it holds, and drops the key at 0", async () => {
        const key = uniqueName("back:");
        const big = 2 ** 32;
        const first = await store.counters.hit(key, 10_000, big + 3);
        const back = await store.counters.giveBack(key, big - 1);
        expect(back.count).toBe(4);
        expect(back.resetInMs).toBeGreaterThan(0);
        expect(back.resetInMs).toBeLessThanOrEqual(first.resetInMs);
        // More than it holds (a hit from an earlier window): nothing changes.
        expect((await store.counters.giveBack(key, 5)).count).toBe(4);
        expect((await store.counters.giveBack(key)).count).toBe(3);
        expect(await store.counters.giveBack(key, 3)).toEqual({ count: 0, resetInMs: 0 });
        expect(await store.counters.peek(key)).toEqual({ count: 0, resetInMs: 0 });
        // The window a later hit starts is a fresh one.
        expect((await store.counters.hit(key, 5_000)).resetInMs).toBeGreaterThan(4_000);
        expect(await store.counters.giveBack(uniqueName("none:"))).toEqual({ count: 0, resetInMs: 0 });
      });

      it("rejects bad windows and increments", async () => {
        await expectGatewayError(store.counters.hit("k", 0), "INVALID_REQUEST");
        await expectGatewayError(store.counters.hit("k", 1_000, 0), "INVALID_REQUEST");
        await expectGatewayError(store.counters.hit("k", 1_000, 1.5), "INVALID_REQUEST");
        await expectGatewayError(store.counters.giveBack("k", 0), "INVALID_REQUEST");
        await expectGatewayError(store.counters.giveBack("k", -1), "INVALID_REQUEST");
      });
    });

    describe("sets", () => {
      it("adds, de-duplicates and removes members", async () => {
        const key = uniqueName("run:");
        expect(await store.sets.members(key)).toEqual([]);
        await store.sets.add(key, "edge-a", 10_000);
        await store.sets.add(key, "edge-b", 10_000);
        await store.sets.add(key, "edge-a", 10_000);
        expect((await store.sets.members(key)).sort()).toEqual(["edge-a", "edge-b"]);
        await store.sets.remove(key, "edge-a");
        await store.sets.remove(key, "not-there");
        expect(await store.sets.members(key)).toEqual(["edge-b"]);
        await store.sets.remove(key, "edge-b");
        expect(await store.sets.members(key)).toEqual([]);
      });

      it("expires the whole set after the TTL", async () => {
        const key = uniqueName("ttl:");
        await store.sets.add(key, "a", 200);
        await store.sets.add(key, "b", 200);
        await waitFor(async () => ((await store.sets.members(key)).length === 0 ? true : undefined), {
          ...EXPIRY_BOUND,
          what: "the set to expire",
        });
      });

      it("refreshes the TTL of the whole set on every add", async () => {
        const key = uniqueName("refresh:");
        const started = Date.now();
        await store.sets.add(key, "first", 600);
        await sleep(300);
        await store.sets.add(key, "second", 600);
        // Past the first add's deadline, well before the second's.
        await sleep(Math.max(0, 750 - (Date.now() - started)));
        expect((await store.sets.members(key)).sort()).toEqual(["first", "second"]);
      });
    });

    describe("values", () => {
      it("sets, gets and deletes", async () => {
        const key = uniqueName("run-state:");
        expect(await store.values.get(key)).toBeNull();
        expect(await store.values.set(key, "running")).toBe(true);
        expect(await store.values.get(key)).toBe("running");
        expect(await store.values.set(key, "done")).toBe(true);
        expect(await store.values.get(key)).toBe("done");
        await store.values.delete(key);
        await store.values.delete(key);
        expect(await store.values.get(key)).toBeNull();
      });

      it("writes with ifAbsent only when the key holds no value", async () => {
        const key = uniqueName("owner:");
        expect(await store.values.set(key, "runner-1", { ifAbsent: true })).toBe(true);
        expect(await store.values.set(key, "runner-2", { ifAbsent: true })).toBe(false);
        expect(await store.values.get(key)).toBe("runner-1");
        const racers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => store.values.set(`${key}:race`, `r${i}`, { ifAbsent: true })),
        );
        expect(racers.filter(Boolean)).toHaveLength(1);
      });

      it("expires a value after its TTL, freeing it for ifAbsent", async () => {
        const key = uniqueName("lease:");
        expect(await store.values.set(key, "held", { ttlMs: 200, ifAbsent: true })).toBe(true);
        await waitFor(async () => ((await store.values.get(key)) === null ? true : undefined), {
          ...EXPIRY_BOUND,
          what: "the value to expire",
        });
        expect(await store.values.set(key, "again", { ifAbsent: true })).toBe(true);
      });

      it("applies writes in the order they were issued, without waiting for each", async () => {
        // The run registry relies on this: a run's outcome is written right behind its claim.
        const key = uniqueName("run:");
        const beat = uniqueName("runhb:");
        const writes = [
          store.values.set(key, "running"),
          store.values.set(beat, "runner-1"),
          store.values.set(key, "done"),
          store.values.delete(beat),
        ];
        await Promise.all(writes);
        expect(await store.values.get(key)).toBe("done");
        expect(await store.values.get(beat)).toBeNull();
      });

      it("reads several values at once, in key order", async () => {
        const [a, b, missing] = [uniqueName("run:"), uniqueName("runabort:"), uniqueName("none:")];
        await store.values.set(a, "record");
        await store.values.set(b, "1");
        expect(await store.values.getMany([a, missing, b])).toEqual(["record", null, "1"]);
        expect(await store.values.getMany([])).toEqual([]);
      });

      it("applies several writes at once, in order, deletes and TTLs included", async () => {
        const [run, beat] = [uniqueName("run:"), uniqueName("runhb:")];
        await store.values.set(beat, "runner-0");
        await store.values.writeAll([
          { key: run, value: "running" },
          { key: beat, value: null },
          { key: run, value: "done", ttlMs: 300 },
        ]);
        expect(await store.values.getMany([run, beat])).toEqual(["done", null]);
        await waitFor(async () => ((await store.values.get(run)) === null ? true : undefined), {
          ...EXPIRY_BOUND,
          what: "the value written with a TTL to expire",
        });
        await expectGatewayError(store.values.writeAll([{ key: run, value: "x", ttlMs: -1 }]), "INVALID_REQUEST");
        expect(await store.values.get(run)).toBeNull();
      });

      it("rejects a TTL that is not a positive duration", async () => {
        await expectGatewayError(store.values.set("k", "v", { ttlMs: 0 }), "INVALID_REQUEST");
      });
    });

    describe("leases", () => {
      it("gives a free lease to one holder, renews it only for that holder, and frees it on release", async () => {
        const key = uniqueName("poller:");
        expect(await store.leases.holder(key)).toBeNull();
        expect(await store.leases.acquire(key, "replica-a", 5_000)).toBe(true);
        expect(await store.leases.acquire(key, "replica-b", 5_000)).toBe(false);
        expect(await store.leases.acquire(key, "replica-a", 5_000)).toBe(true);
        expect(await store.leases.holder(key)).toBe("replica-a");
        expect(await store.leases.renew(key, "replica-b", 5_000)).toBe(false);
        expect(await store.leases.renew(key, "replica-a", 5_000)).toBe(true);
        await store.leases.release(key, "replica-b");
        expect(await store.leases.holder(key)).toBe("replica-a");
        await store.leases.release(key, "replica-a");
        expect(await store.leases.holder(key)).toBeNull();
        expect(await store.leases.renew(key, "replica-a", 5_000)).toBe(false);
        expect(await store.leases.acquire(key, "replica-b", 5_000)).toBe(true);
      });

      it("gives a contended lease to exactly one of 20 concurrent holders", async () => {
        const key = uniqueName("poller:");
        const won = await Promise.all(Array.from({ length: 20 }, (_, i) => store.leases.acquire(key, `r${i}`, 5_000)));
        expect(won.filter(Boolean)).toHaveLength(1);
        expect(await store.leases.holder(key)).toBe(`r${won.indexOf(true)}`);
      });

      it("lapses without renewal, after which the old holder can neither renew nor release it", async () => {
        const key = uniqueName("poller:");
        expect(await store.leases.acquire(key, "old", 200)).toBe(true);
        await waitFor(async () => ((await store.leases.holder(key)) === null ? true : undefined), {
          ...EXPIRY_BOUND,
          what: "the lease to lapse",
        });
        expect(await store.leases.acquire(key, "new", 5_000)).toBe(true);
        expect(await store.leases.renew(key, "old", 5_000)).toBe(false);
        await store.leases.release(key, "old");
        expect(await store.leases.holder(key)).toBe("new");
      });

      it("keeps a renewed lease past its first deadline", async () => {
        const key = uniqueName("poller:");
        const started = Date.now();
        await store.leases.acquire(key, "a", 1_000);
        await sleep(300);
        expect(await store.leases.renew(key, "a", 3_000)).toBe(true);
        // Past the first deadline, well before the renewed one.
        await sleep(Math.max(0, 1_300 - (Date.now() - started)));
        expect(await store.leases.holder(key)).toBe("a");
      });

      it("rejects a TTL that is not a positive duration", async () => {
        await expectGatewayError(store.leases.acquire("k", "a", 0), "INVALID_REQUEST");
        await expectGatewayError(store.leases.renew("k", "a", -5), "INVALID_REQUEST");
      });
    });

    it("keeps the stores apart even for equal keys", async () => {
      const key = uniqueName("shared:");
      await store.values.set(key, "value");
      await store.sets.add(key, "member", 10_000);
      await store.counters.hit(key, 10_000);
      expect(await store.leases.acquire(key, "holder", 10_000)).toBe(true);
      expect(await store.idempotency.begin(key, 10_000)).toEqual({ status: "new" });
      expect(await store.values.get(key)).toBe("value");
      expect(await store.sets.members(key)).toEqual(["member"]);
      expect((await store.counters.peek(key)).count).toBe(1);
    });

    it("is healthy until closed, and refuses work afterwards", async () => {
      expect(store.isHealthy()).toBe(true);
      await store.close();
      expect(store.isHealthy()).toBe(false);
      await expectGatewayError(store.values.get("k"), "UNAVAILABLE");
      await store.close();
    });
  });
}
