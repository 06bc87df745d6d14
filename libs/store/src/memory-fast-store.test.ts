import { describe, expect, it, vi } from "vitest";
import { ExpiringMap } from "./expiring-map.js";
import { describeFastStoreContract } from "./fast-store.contract.js";
import { createMemoryFastStore } from "./memory-fast-store.js";

describeFastStoreContract("memory", async () => createMemoryFastStore());

describe("memory FastStore with an injected clock", () => {
  it("expires on the injected clock, without real waiting", async () => {
    let now = 1_000_000;
    const store = createMemoryFastStore({ now: () => now });
    try {
      await store.idempotency.begin("k", 100);
      const hit = await store.counters.hit("c", 100);
      expect(hit).toEqual({ count: 1, resetInMs: 100 });
      now += 40;
      expect(await store.counters.peek("c")).toEqual({ count: 1, resetInMs: 60 });
      now += 60;
      expect(await store.idempotency.lookup("k")).toEqual({ status: "new" });
      expect(await store.counters.peek("c")).toEqual({ count: 0, resetInMs: 0 });
    } finally {
      await store.close();
    }
  });

  it("sweeps expired entries on a timer, so keys nobody reads again do not pile up", async () => {
    const sweep = vi.spyOn(ExpiringMap.prototype, "sweep");
    const store = createMemoryFastStore({ sweepIntervalMs: 10 });
    try {
      await vi.waitFor(() => expect(sweep.mock.calls.length).toBeGreaterThanOrEqual(4), { timeout: 2_000 });
    } finally {
      await store.close();
      sweep.mockRestore();
    }
  });
});
