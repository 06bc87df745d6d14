import { waitFor } from "@gw/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectGatewayError, sleep, uniqueName } from "./contract-helpers.js";
import { describeCountingContract, EXPIRY_BOUND } from "./fast-store-counting.contract.js";
import type { FastStore } from "./fast-store.js";

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

    describeCountingContract(() => store);

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
