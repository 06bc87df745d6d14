import { waitFor } from "@gw/testing";
import { describe, expect, it } from "vitest";
import { expectGatewayError, sleep, uniqueName } from "./contract-helpers.js";
import type { FastStore } from "./fast-store.js";

/** Expiry checks poll instead of sleeping a fixed time; this bounds how long they may take. */
export const EXPIRY_BOUND = { timeoutMs: 3_000, intervalMs: 20 };

/**
 * The part of the FastStore contract (fast-store.contract.ts) for what counts and claims:
 * idempotency keys and windowed counters. `store` gives the fresh store of the running test.
 */
export function describeCountingContract(store: () => FastStore): void {
  describe("idempotency", () => {
    it("hands out a key once, then reports pending, then the stored result", async () => {
      const key = uniqueName("send:");
      expect(await store().idempotency.lookup(key)).toEqual({ status: "new" });
      expect(await store().idempotency.begin(key, 5_000)).toEqual({ status: "new" });
      expect(await store().idempotency.begin(key, 5_000)).toEqual({ status: "pending" });
      expect(await store().idempotency.lookup(key)).toEqual({ status: "pending" });
      await store().idempotency.complete(key, '{"messageId":"m1"}', 5_000);
      expect(await store().idempotency.lookup(key)).toEqual({ status: "done", result: '{"messageId":"m1"}' });
      expect(await store().idempotency.begin(key, 5_000)).toEqual({
        status: "done",
        result: '{"messageId":"m1"}',
      });
    });

    it("gives 'new' to exactly one of 20 concurrent callers", async () => {
      const key = uniqueName("race:");
      const states = await Promise.all(
        Array.from({ length: 20 }, () => store().idempotency.begin(key, 5_000)),
      );
      expect(states.filter((s) => s.status === "new")).toHaveLength(1);
      expect(states.filter((s) => s.status === "pending")).toHaveLength(19);
    });

    it("lets a retry begin again after abandon(), but never drops a completed result", async () => {
      const key = uniqueName("fail:");
      await store().idempotency.begin(key, 5_000);
      await store().idempotency.abandon(key);
      expect(await store().idempotency.begin(key, 5_000)).toEqual({ status: "new" });
      await store().idempotency.complete(key, "ok", 5_000);
      await store().idempotency.abandon(key);
      expect(await store().idempotency.lookup(key)).toEqual({ status: "done", result: "ok" });
      await store().idempotency.abandon(uniqueName("never-begun:"));
    });

    it("extends a pending claim only, so a live holder keeps its key", async () => {
      const key = uniqueName("extend:");
      expect(await store().idempotency.extend(key, 5_000)).toBe(false);
      await store().idempotency.begin(key, 300);
      expect(await store().idempotency.extend(key, 5_000)).toBe(true);
      await new Promise((r) => setTimeout(r, 500));
      expect(await store().idempotency.lookup(key)).toEqual({ status: "pending" });
      await store().idempotency.complete(key, "r", 5_000);
      expect(await store().idempotency.extend(key, 100)).toBe(false);
      await new Promise((r) => setTimeout(r, 300));
      expect(await store().idempotency.lookup(key)).toEqual({ status: "done", result: "r" });
    });

    it("lets only a claim's own holder extend or abandon it, so a holder whose claim lapsed and was taken leaves the new one alone", async () => {
      const key = uniqueName("holder:");
      expect(await store().idempotency.begin(key, 200, "first")).toEqual({ status: "new" });
      expect(await store().idempotency.begin(key, 5_000, "second")).toEqual({ status: "pending" });
      await waitFor(async () => ((await store().idempotency.lookup(key)).status === "new" ? true : undefined), {
        ...EXPIRY_BOUND,
        what: "the first claim to lapse",
      });
      expect(await store().idempotency.begin(key, 5_000, "second")).toEqual({ status: "new" });
      // The first holder wakes up late: its heartbeat and its abandon after a failure change nothing.
      expect(await store().idempotency.extend(key, 5_000, "first")).toBe(false);
      await store().idempotency.abandon(key, "first");
      await store().idempotency.abandon(key);
      expect(await store().idempotency.begin(key, 5_000, "third")).toEqual({ status: "pending" });
      expect(await store().idempotency.extend(key, 5_000, "second")).toBe(true);
      await store().idempotency.abandon(key, "second");
      expect(await store().idempotency.begin(key, 5_000, "third")).toEqual({ status: "new" });
    });

    it("keeps results with any characters, including an empty result", async () => {
      const key = uniqueName("chars:");
      await store().idempotency.complete(key, "", 5_000);
      expect(await store().idempotency.lookup(key)).toEqual({ status: "done", result: "" });
      await store().idempotency.complete(key, "D P N\n🎉", 5_000);
      expect(await store().idempotency.lookup(key)).toEqual({ status: "done", result: "D P N\n🎉" });
    });

    it("forgets a pending claim and a completed result after their windows", async () => {
      const pending = uniqueName("pending:");
      const done = uniqueName("done:");
      await store().idempotency.begin(pending, 200);
      await store().idempotency.begin(done, 5_000);
      await store().idempotency.complete(done, "r", 200);
      await waitFor(
        async () => ((await store().idempotency.lookup(pending)).status === "new" ? true : undefined),
        {
          ...EXPIRY_BOUND,
          what: "the pending claim to expire",
        },
      );
      await waitFor(
        async () => ((await store().idempotency.lookup(done)).status === "new" ? true : undefined),
        {
          ...EXPIRY_BOUND,
          what: "the completed result to expire",
        },
      );
      expect(await store().idempotency.begin(pending, 5_000)).toEqual({ status: "new" });
    });

    it("rejects a window that is not a positive duration", async () => {
      await expectGatewayError(store().idempotency.begin("k", 0), "INVALID_REQUEST");
      await expectGatewayError(store().idempotency.complete("k", "r", -5), "INVALID_REQUEST");
    });
  });

  describe("counters", () => {
    it("counts hits in a fixed window started by the first hit", async () => {
      const key = uniqueName("ip:");
      expect(await store().counters.peek(key)).toEqual({ count: 0, resetInMs: 0 });
      const first = await store().counters.hit(key, 10_000);
      expect(first.count).toBe(1);
      expect(first.resetInMs).toBeGreaterThan(9_000);
      expect(first.resetInMs).toBeLessThanOrEqual(10_000);
      expect((await store().counters.hit(key, 10_000, 3)).count).toBe(4);
      const peeked = await store().counters.peek(key);
      expect(peeked.count).toBe(4);
      expect(peeked.resetInMs).toBeLessThanOrEqual(first.resetInMs);
    });

    it("does not extend the window on later hits", async () => {
      const key = uniqueName("fixed:");
      await store().counters.hit(key, 1_000);
      await sleep(300);
      const later = await store().counters.hit(key, 1_000);
      expect(later.count).toBe(2);
      expect(later.resetInMs).toBeLessThanOrEqual(750);
    });

    it("starts from zero once the window is over", async () => {
      const key = uniqueName("window:");
      await store().counters.hit(key, 200, 5);
      const reset = await waitFor(
        async () => {
          const c = await store().counters.peek(key);
          return c.count === 0 ? c : undefined;
        },
        { ...EXPIRY_BOUND, what: "the counter window to end" },
      );
      expect(reset).toEqual({ count: 0, resetInMs: 0 });
      const fresh = await store().counters.hit(key, 5_000);
      expect(fresh.count).toBe(1);
      expect(fresh.resetInMs).toBeGreaterThan(4_000);
    });

    it("reset() clears the count", async () => {
      const key = uniqueName("reset:");
      await store().counters.hit(key, 10_000, 7);
      await store().counters.reset(key);
      expect(await store().counters.peek(key)).toEqual({ count: 0, resetInMs: 0 });
      expect((await store().counters.hit(key, 10_000)).count).toBe(1);
    });

    it("counts every one of many concurrent hits", async () => {
      const key = uniqueName("burst:");
      const results = await Promise.all(Array.from({ length: 50 }, () => store().counters.hit(key, 10_000)));
      expect(results.map((r) => r.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
    });

    it("gives hits back within the window, never below what it holds, and drops the key at 0", async () => {
      const key = uniqueName("back:");
      const big = 2 ** 32;
      const first = await store().counters.hit(key, 10_000, big + 3);
      const back = await store().counters.giveBack(key, big - 1);
      expect(back.count).toBe(4);
      expect(back.resetInMs).toBeGreaterThan(0);
      expect(back.resetInMs).toBeLessThanOrEqual(first.resetInMs);
      // More than it holds (a hit from an earlier window): nothing changes.
      expect((await store().counters.giveBack(key, 5)).count).toBe(4);
      expect((await store().counters.giveBack(key)).count).toBe(3);
      expect(await store().counters.giveBack(key, 3)).toEqual({ count: 0, resetInMs: 0 });
      expect(await store().counters.peek(key)).toEqual({ count: 0, resetInMs: 0 });
      // The window a later hit starts is a fresh one.
      expect((await store().counters.hit(key, 5_000)).resetInMs).toBeGreaterThan(4_000);
      expect(await store().counters.giveBack(uniqueName("none:"))).toEqual({ count: 0, resetInMs: 0 });
    });

    it("rejects bad windows and increments", async () => {
      await expectGatewayError(store().counters.hit("k", 0), "INVALID_REQUEST");
      await expectGatewayError(store().counters.hit("k", 1_000, 0), "INVALID_REQUEST");
      await expectGatewayError(store().counters.hit("k", 1_000, 1.5), "INVALID_REQUEST");
      await expectGatewayError(store().counters.giveBack("k", 0), "INVALID_REQUEST");
      await expectGatewayError(store().counters.giveBack("k", -1), "INVALID_REQUEST");
    });
  });

}
