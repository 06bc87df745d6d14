import { createMemoryFastStore } from "./memory-fast-store.js";
import { describe, expect, it } from "vitest";
import { fingerprint, RunOnce } from "./run-once.js";

const far = () => Date.now() + 10_000;

describe("RunOnce", () => {
  it("runs the work once and answers repeats from the first result", async () => {
    const runner = new RunOnce<unknown>(createMemoryFastStore(), { windowMs: 60_000, claimTtlMs: 5_000 });
    let calls = 0;
    const work = async () => ({ n: ++calls });
    expect(await runner.run("k1", "fp", far(), work)).toEqual({ value: { n: 1 }, cached: false });
    expect(await runner.run("k1", "fp", far(), work)).toEqual({ value: { n: 1 }, cached: true });
    expect(calls).toBe(1);
  });

  it("makes concurrent repeats wait for the first, on two runners sharing one store", async () => {
    const store = createMemoryFastStore();
    const [a, b] = [
      new RunOnce<unknown>(store, { windowMs: 60_000, claimTtlMs: 5_000, pollMs: 5 }),
      new RunOnce<unknown>(store, { windowMs: 60_000, claimTtlMs: 5_000, pollMs: 5 }),
    ];
    let calls = 0;
    const work = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 100));
      return "done";
    };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).run("k2", "fp", far(), work)));
    expect(calls).toBe(1);
    expect(results.filter((r) => !r.cached)).toHaveLength(1);
    expect(results.every((r) => r.value === "done")).toBe(true);
  });

  it("tells the work whether the key was used before, and gives back a claim a conflicting request won", async () => {
    const runner = new RunOnce<unknown>(createMemoryFastStore(), { windowMs: 60_000, claimTtlMs: 60_000 });
    const seen: boolean[] = [];
    const failing = async (fresh: boolean) => {
      seen.push(fresh);
      throw new Error("platform down");
    };
    await expect(runner.run("k9", "fp-a", far(), failing)).rejects.toThrow("platform down");
    // The failure dropped the claim; another request under the key wins it, then is refused.
    await expect(runner.run("k9", "fp-b", far(), async () => "other")).rejects.toMatchObject({ code: "CONFLICT" });
    // The retry is not held up by that claim (60 s TTL) and knows an attempt came before it.
    expect(await runner.run("k9", "fp-a", Date.now() + 1_000, async (fresh) => (seen.push(fresh), "sent"))).toEqual({
      value: "sent",
      cached: false,
    });
    expect(seen).toEqual([true, false]);
  });

  it("refuses the same key with a different request", async () => {
    const runner = new RunOnce<unknown>(createMemoryFastStore(), { windowMs: 60_000, claimTtlMs: 5_000 });
    await runner.run("k3", fingerprint({ text: "a" }), far(), async () => 1);
    await expect(runner.run("k3", fingerprint({ text: "b" }), far(), async () => 2)).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });

  it("forgets a failure, so a retry does the work again", async () => {
    const runner = new RunOnce<unknown>(createMemoryFastStore(), { windowMs: 60_000, claimTtlMs: 5_000 });
    await expect(runner.run("k4", "fp", far(), () => Promise.reject(new Error("platform down")))).rejects.toThrow(
      "platform down",
    );
    expect(await runner.run("k4", "fp", far(), async () => "ok")).toEqual({ value: "ok", cached: false });
  });

  it("takes over a claim whose holder died once the claim lapses", async () => {
    const store = createMemoryFastStore();
    await store.idempotency.begin("idem:k5", 150); // a holder that never completes
    const runner = new RunOnce<unknown>(store, { windowMs: 60_000, claimTtlMs: 150, pollMs: 10 });
    expect(await runner.run("k5", "fp", far(), async () => "mine")).toEqual({ value: "mine", cached: false });
  });

  it("never lets a repeat overtake a live holder that works past the claim's lapse", async () => {
    const store = createMemoryFastStore();
    const runner = new RunOnce<unknown>(store, { windowMs: 60_000, claimTtlMs: 90, pollMs: 10 });
    let calls = 0;
    const slow = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 400));
      return calls;
    };
    const [first, repeat] = await Promise.all([
      runner.run("k7", "fp", far(), slow),
      new Promise((r) => setTimeout(r, 50)).then(() => runner.run("k7", "fp", far(), slow)),
    ]);
    expect(calls).toBe(1);
    expect(first).toEqual({ value: 1, cached: false });
    expect(repeat).toEqual({ value: 1, cached: true });
  });

  it("stops waiting for a slow first request at its own deadline", async () => {
    const store = createMemoryFastStore();
    await store.idempotency.begin("idem:k6", 10_000);
    const runner = new RunOnce<unknown>(store, { windowMs: 60_000, claimTtlMs: 10_000, pollMs: 10 });
    await expect(runner.run("k6", "fp", Date.now() + 100, async () => "never")).rejects.toMatchObject({ code: "TIMEOUT" });
  });
});
