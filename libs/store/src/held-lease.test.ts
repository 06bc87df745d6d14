import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FastStore, LeaseStore } from "./fast-store.js";
import { describeHeldLeaseContract } from "./held-lease.contract.js";
import { HeldLease } from "./held-lease.js";
import { createMemoryFastStore } from "./memory-fast-store.js";

describeHeldLeaseContract("memory", async () => {
  const store = createMemoryFastStore();
  return [store, store];
});

const TIMING = { ttlMs: 400, renewEveryMs: 100 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("HeldLease", () => {
  let store: FastStore;
  const held: HeldLease[] = [];
  beforeEach(() => {
    store = createMemoryFastStore();
  });
  afterEach(async () => {
    for (const lease of held.splice(0)) await lease.release();
    await store.close();
  });

  async function hold(leases: LeaseStore = store.leases): Promise<HeldLease> {
    const at = Date.now();
    expect(await store.leases.acquire("k", "me", TIMING.ttlMs)).toBe(true);
    const lease = new HeldLease(leases, "k", "me", TIMING, at);
    held.push(lease);
    return lease;
  }

  it("keeps the lease for as long as renewals succeed", async () => {
    const lease = await hold();
    await sleep(TIMING.ttlMs * 3);
    expect(lease.held()).toBe(true);
    expect(lease.lost.aborted).toBe(false);
    expect(await store.leases.holder("k")).toBe("me");
  });

  it("gives the lease up before it could lapse when renewals fail, so nobody else reads meanwhile", async () => {
    const failing: LeaseStore = { ...store.leases, renew: () => Promise.reject(new Error("redis is gone")) };
    const started = Date.now();
    const lease = await hold(failing);
    await new Promise((resolve) => lease.lost.addEventListener("abort", resolve, { once: true }));
    const after = Date.now() - started;
    expect(after).toBeLessThan(TIMING.ttlMs);
    expect(after).toBeGreaterThanOrEqual(TIMING.ttlMs - TIMING.renewEveryMs);
    expect(lease.held()).toBe(false);
    expect(String(lease.lost.reason)).toContain("could not be renewed in time");
  });

  it("notices at the next renewal that another holder took the lease", async () => {
    const lease = await hold();
    await store.leases.release("k", "me");
    expect(await store.leases.acquire("k", "other", 5_000)).toBe(true);
    await sleep(TIMING.renewEveryMs * 2);
    expect(lease.lost.aborted).toBe(true);
    expect(String(lease.lost.reason)).toContain("taken by another holder");
    await lease.release();
    expect(await store.leases.holder("k")).toBe("other");
  });

  it("frees the lease on release", async () => {
    const lease = await hold();
    await lease.release();
    expect(lease.lost.aborted).toBe(true);
    expect(await store.leases.holder("k")).toBeNull();
  });
});
