import { waitFor } from "@gw/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { uniqueName } from "./contract-helpers.js";
import type { FastStore, LeaseStore } from "./fast-store.js";
import { type LeaseTiming, withLease } from "./held-lease.js";

const TIMING: LeaseTiming = { ttlMs: 300, renewEveryMs: 100 };
const BOUND = { timeoutMs: 3_000, intervalMs: 20 };

/** A replica whose renewals stall (a paused process, a slow link) until `resume`, then arrive late. */
function stallRenewals(leases: LeaseStore) {
  let resume!: () => void;
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  const late: Array<Promise<boolean>> = [];
  const stalled: LeaseStore = {
    ...leases,
    renew: (key, holder, ttlMs) => {
      const sent = resumed.then(() => leases.renew(key, holder, ttlMs));
      late.push(sent);
      return sent;
    },
  };
  return { leases: stalled, resume, late };
}

const lostOnce = (signal: AbortSignal) =>
  new Promise<unknown>((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));

/**
 * `withLease` over a FastStore's leases, seen by two replicas: `pair` returns two clients of one
 * keyspace (two connections to one Redis; for memory, the one store twice).
 */
export function describeHeldLeaseContract(name: string, pair: () => Promise<[FastStore, FastStore]>): void {
  describe(`withLease: ${name}`, () => {
    let a: FastStore;
    let b: FastStore;
    beforeEach(async () => {
      [a, b] = await pair();
    });
    afterEach(async () => {
      await a.close();
      if (b !== a) await b.close();
    });

    it("runs the work of one replica at a time and frees the lease after it, even when the work throws", async () => {
      const key = uniqueName("lease:");
      const inner = await withLease(a.leases, key, "replica-a", TIMING, async () => {
        const meanwhile = await withLease(b.leases, key, "replica-b", TIMING, async () => "ran");
        return { meanwhile, holder: await b.leases.holder(key) };
      });
      expect(inner).toEqual({ held: true, value: { meanwhile: { held: false }, holder: "replica-a" } });
      expect(await b.leases.holder(key)).toBeNull();
      await expect(withLease(b.leases, key, "replica-b", TIMING, () => Promise.reject(new Error("work failed")))).rejects.toThrow("work failed");
      expect(await a.leases.holder(key)).toBeNull();
    });

    it("keeps the lease past its TTL for as long as the work runs", async () => {
      const key = uniqueName("lease:");
      const started = Date.now();
      const outcome = await withLease(a.leases, key, "replica-a", TIMING, async (lease) => {
        await waitFor(async () => (Date.now() - started > TIMING.ttlMs * 3 ? true : undefined), { ...BOUND, what: "three TTLs" });
        return { aborted: lease.lost.aborted, other: await withLease(b.leases, key, "replica-b", TIMING, async () => "ran") };
      });
      expect(outcome).toEqual({ held: true, value: { aborted: false, other: { held: false } } });
    });

    it("fails safe when a stalled holder's lease lapses: its work is told to stop, and its late renew and release leave the new holder's lease alone", async () => {
      const key = uniqueName("lease:");
      const stalled = stallRenewals(a.leases);
      const outcome = await withLease(stalled.leases, key, "replica-a", TIMING, async (lease) => {
        const reason = await lostOnce(lease.lost);
        // Replica B takes the lapsed lease while A's renewal is still on its way.
        await waitFor(async () => ((await b.leases.acquire(key, "replica-b", 10_000)) ? true : undefined), {
          ...BOUND,
          what: "the stalled holder's lease to lapse and B to take it",
        });
        stalled.resume();
        return { reason: String(reason), held: lease.held(), lateRenewals: await Promise.all(stalled.late) };
      });
      expect(outcome.held).toBe(true);
      if (!outcome.held) return;
      expect(outcome.value.reason).toContain("could not be renewed in time");
      expect(outcome.value.held).toBe(false);
      expect(outcome.value.lateRenewals.length).toBeGreaterThan(0);
      expect(outcome.value.lateRenewals.every((renewed) => !renewed)).toBe(true);
      // A release from A that comes later still (a retry, a shutdown hook) frees nothing either.
      await a.leases.release(key, "replica-a");
      expect(await a.leases.holder(key)).toBe("replica-b");
      expect(await b.leases.renew(key, "replica-b", 10_000)).toBe(true);
      await b.leases.release(key, "replica-b");
    });

    it("tells the work to stop at the next renewal when another holder has the lease", async () => {
      const key = uniqueName("lease:");
      const outcome = await withLease(a.leases, key, "replica-a", TIMING, async (lease) => {
        // What a buggy peer (or an operator) could do: delete A's lease and take it.
        await a.leases.release(key, "replica-a");
        expect(await b.leases.acquire(key, "replica-b", 10_000)).toBe(true);
        return String(await lostOnce(lease.lost));
      });
      expect(outcome).toEqual({ held: true, value: expect.stringContaining("taken by another holder") });
      expect(await b.leases.holder(key)).toBe("replica-b");
    });
  });
}
