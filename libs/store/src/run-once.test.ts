import { type RedisServerHandle, startRedis } from "@gw/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { uniqueName } from "./contract-helpers.js";
import type { FastStore } from "./fast-store.js";
import { createMemoryFastStore } from "./memory-fast-store.js";
import { createRedisFastStore } from "./redis-fast-store.js";
import { fingerprint, RunOnce, type RunOnceSettings } from "./run-once.js";

const far = () => Date.now() + 10_000;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redis: RedisServerHandle;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const STORES: Array<[string, () => Promise<FastStore>]> = [
  ["memory", async () => createMemoryFastStore()],
  // A fresh key prefix per test on one shared server.
  ["redis", () => createRedisFastStore({ url: redis.url, keyPrefix: `${uniqueName("run-once")}:` })],
];

describe.each(STORES)("RunOnce (%s)", (_name, open) => {
  let store: FastStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.close();
  });
  const runOnce = (opts: Partial<RunOnceSettings> = {}) =>
    new RunOnce<unknown>(store, { windowMs: 60_000, claimTtlMs: 5_000, schema: z.unknown(), ...opts });

  it("runs the work once and answers repeats from the first result", async () => {
    const runner = runOnce();
    let calls = 0;
    const work = async () => ({ n: ++calls });
    expect(await runner.run("k1", "fp", far(), work)).toEqual({ value: { n: 1 }, cached: false });
    expect(await runner.run("k1", "fp", far(), work)).toEqual({ value: { n: 1 }, cached: true });
    expect(calls).toBe(1);
  });

  it("answers a repeat whose stored result does not decode with INTERNAL naming it, and does not do the work again", async () => {
    await runOnce().run("k-corrupt", "fp", far(), async () => ({ n: 1 }));
    const strict = new RunOnce(store, { windowMs: 60_000, claimTtlMs: 5_000, schema: z.object({ n: z.string() }) });
    let calls = 0;
    const repeat = strict.run("k-corrupt", "fp", far(), async () => ({ n: String(++calls) }));
    await expect(repeat).rejects.toMatchObject({ code: "INTERNAL", message: expect.stringContaining("does not decode") });
    expect(calls).toBe(0);
  });

  it.each([false, true])("makes concurrent repeats wait for the first, on two runners sharing one store (forgetFailedRequest %s)", async (forget) => {
    const [a, b] = [runOnce({ pollMs: 5, forgetFailedRequest: forget }), runOnce({ pollMs: 5, forgetFailedRequest: forget })];
    let calls = 0;
    const work = async () => {
      calls++;
      await pause(100);
      return "done";
    };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).run("k2", "fp", far(), work)));
    expect(calls).toBe(1);
    expect(results.filter((r) => !r.cached)).toHaveLength(1);
    expect(results.every((r) => r.value === "done")).toBe(true);
  });

  it("tells the work whether the key was used before, and gives back a claim a conflicting request won", async () => {
    const runner = runOnce({ claimTtlMs: 60_000 });
    const seen: boolean[] = [];
    const failing = async (fresh: boolean) => {
      seen.push(fresh);
      throw new Error("platform down");
    };
    await expect(runner.run("k9", "fp-a", far(), failing)).rejects.toThrow("platform down");
    // The failure dropped the claim but kept the request: another request under the key wins the claim, then is refused.
    await expect(runner.run("k9", "fp-b", far(), async () => "other")).rejects.toMatchObject({ code: "CONFLICT" });
    // The retry is not held up by that claim (60 s TTL) and knows an attempt came before it.
    expect(await runner.run("k9", "fp-a", Date.now() + 1_000, async (fresh) => (seen.push(fresh), "sent"))).toEqual({
      value: "sent",
      cached: false,
    });
    expect(seen).toEqual([true, false]);
  });

  it("refuses the same key with a different request", async () => {
    for (const forget of [false, true]) {
      const runner = runOnce({ forgetFailedRequest: forget });
      await runner.run(`k3-${forget}`, fingerprint({ text: "a" }), far(), async () => 1);
      await expect(runner.run(`k3-${forget}`, fingerprint({ text: "b" }), far(), async () => 2)).rejects.toMatchObject({ code: "CONFLICT" });
    }
  });

  it("forgets a failure, so a retry does the work again", async () => {
    const runner = runOnce();
    await expect(runner.run("k4", "fp", far(), () => Promise.reject(new Error("platform down")))).rejects.toThrow("platform down");
    expect(await runner.run("k4", "fp", far(), async () => "ok")).toEqual({ value: "ok", cached: false });
  });

  it("takes over a claim whose holder died once the claim lapses", async () => {
    await store.idempotency.begin("idem:k5", 150); // a holder that never completes
    const runner = runOnce({ claimTtlMs: 150, pollMs: 10 });
    expect(await runner.run("k5", "fp", far(), async () => "mine")).toEqual({ value: "mine", cached: false });
  });

  it("never lets a repeat overtake a live holder that works past the claim's lapse", async () => {
    const runner = runOnce({ claimTtlMs: 90, pollMs: 10 });
    let calls = 0;
    const slow = async () => {
      calls++;
      await pause(400);
      return calls;
    };
    const [first, repeat] = await Promise.all([runner.run("k7", "fp", far(), slow), pause(50).then(() => runner.run("k7", "fp", far(), slow))]);
    expect(calls).toBe(1);
    expect(first).toEqual({ value: 1, cached: false });
    expect(repeat).toEqual({ value: 1, cached: true });
  });

  it("keeps the claim of a request that took over from a stalled holder when that holder fails late", async () => {
    // A's heartbeats stall (a paused process), so its claim lapses while its work still runs.
    const stalled: FastStore = { ...store, idempotency: { ...store.idempotency, extend: () => new Promise<boolean>(() => undefined) } };
    const a = new RunOnce<unknown>(stalled, { windowMs: 60_000, claimTtlMs: 150, pollMs: 10, schema: z.unknown() });
    const b = runOnce({ pollMs: 10 });
    let wakeA!: () => void;
    let finishB!: () => void;
    const first = a.run("k8", "fp", far(), () => new Promise((_, reject) => (wakeA = () => reject(new Error("A failed late")))));
    let bStarted = false;
    const second = b.run("k8", "fp", far(), () => ((bStarted = true), new Promise((resolve) => (finishB = () => resolve("B")))));
    while (!bStarted) await pause(10);
    wakeA();
    await expect(first).rejects.toThrow("A failed late");
    // A's abandon came after B took the key: B's claim still holds it, so a repeat waits instead of running.
    let thirdRan = false;
    await expect(b.run("k8", "fp", Date.now() + 150, async () => ((thirdRan = true), "C"))).rejects.toMatchObject({ code: "TIMEOUT" });
    expect(thirdRan).toBe(false);
    finishB();
    expect(await second).toEqual({ value: "B", cached: false });
  });

  it("stops waiting for a slow first request at its own deadline", async () => {
    await store.idempotency.begin("idem:k6", 10_000);
    const runner = runOnce({ claimTtlMs: 10_000, pollMs: 10 });
    await expect(runner.run("k6", "fp", Date.now() + 100, async () => "never")).rejects.toMatchObject({ code: "TIMEOUT" });
  });

  describe("with forgetFailedRequest (hooks: a sender corrects a refused delivery)", () => {
    const fpKey = (key: string) => `idem:fp:${key}`;

    it("lets a corrected request under the key of a failed one run, and then holds the key to it", async () => {
      const runner = runOnce({ forgetFailedRequest: true });
      const seen: boolean[] = [];
      await expect(runner.run("f1", "fp-bad", far(), async (fresh) => (seen.push(fresh), Promise.reject(new Error("unknown agent"))))).rejects.toThrow(
        "unknown agent",
      );
      expect(await store.values.get(fpKey("f1"))).toBeNull();
      expect(await runner.run("f1", "fp-good", far(), async (fresh) => (seen.push(fresh), "accepted"))).toEqual({ value: "accepted", cached: false });
      // A forgotten failure leaves no trace, so no attempt is ever told the key is fresh.
      expect(seen).toEqual([false, false]);
      expect(await runner.run("f1", "fp-good", far(), async () => "again")).toEqual({ value: "accepted", cached: true });
      await expect(runner.run("f1", "fp-bad", far(), async () => "late")).rejects.toMatchObject({ code: "CONFLICT" });
    });

    it("still refuses a different request while the first is at work, and lets it in once the first failed", async () => {
      const runner = runOnce({ forgetFailedRequest: true, pollMs: 5 });
      let fail!: (err: Error) => void;
      const first = runner.run("f2", "fp-a", far(), () => new Promise((_, reject) => (fail = reject)));
      await pause(20);
      await expect(runner.run("f2", "fp-b", far(), async () => "b")).rejects.toMatchObject({ code: "CONFLICT" });
      fail(new Error("refused"));
      await expect(first).rejects.toThrow("refused");
      expect(await runner.run("f2", "fp-b", far(), async () => "b")).toEqual({ value: "b", cached: false });
    });

    it("runs a waiting repeat of a failed request in its place, once, and keeps its fingerprint while it works", async () => {
      const runner = runOnce({ forgetFailedRequest: true, pollMs: 5 });
      let calls = 0;
      let secondStarted!: () => void;
      const second = new Promise<void>((resolve) => (secondStarted = resolve));
      const work = async () => {
        const n = ++calls;
        if (n === 2) secondStarted();
        await pause(80);
        if (n === 1) throw new Error("first attempt fails");
        return `attempt ${n}`;
      };
      const first = runner.run("f3", "fp-a", far(), work);
      await pause(20);
      const repeats = Array.from({ length: 6 }, () => runner.run("f3", "fp-a", far(), work));
      await expect(first).rejects.toThrow("first attempt fails");
      // The repeat that took over has written the fingerprint back: a different request is refused.
      await second;
      await expect(runner.run("f3", "fp-b", far(), async () => "b")).rejects.toMatchObject({ code: "CONFLICT" });
      const results = await Promise.all(repeats);
      expect(calls).toBe(2);
      expect(results.filter((r) => !r.cached)).toHaveLength(1);
      expect(results.every((r) => r.value === "attempt 2")).toBe(true);
    });

    it("never answers a waiter with the result of a different request that took the key after a failure", async () => {
      // A holder of fp-a is at work; a repeat of fp-a waits for it.
      await store.values.set(fpKey("f4"), "fp-a", { ttlMs: 60_000 });
      await store.idempotency.begin("idem:f4", 5_000);
      const runner = runOnce({ forgetFailedRequest: true, pollMs: 5 });
      const waiting = runner.run("f4", "fp-a", far(), async () => "must not run");
      await pause(20);
      // The holder fails and forgets fp-a; a corrected request fp-b takes the key and finishes.
      await store.values.delete(fpKey("f4"));
      await store.values.set(fpKey("f4"), "fp-b", { ttlMs: 60_000, ifAbsent: true });
      await store.idempotency.complete("idem:f4", JSON.stringify("result of fp-b"), 60_000);
      await expect(waiting).rejects.toMatchObject({ code: "CONFLICT" });
    });

    it("gives the claim back when a different request wrote its fingerprint before the waiter won the claim", async () => {
      await store.values.set(fpKey("f5"), "fp-a", { ttlMs: 60_000 });
      await store.idempotency.begin("idem:f5", 5_000);
      const runner = runOnce({ forgetFailedRequest: true, pollMs: 5 });
      const waiting = runner.run("f5", "fp-a", far(), async () => "must not run");
      await pause(20);
      // The holder fails: its fingerprint goes first, fp-b is written (its request waits), then the claim goes.
      await store.values.delete(fpKey("f5"));
      await store.values.set(fpKey("f5"), "fp-b", { ttlMs: 60_000, ifAbsent: true });
      await store.idempotency.abandon("idem:f5");
      await expect(waiting).rejects.toMatchObject({ code: "CONFLICT" });
      // The claim is free for fp-b's request, which runs.
      expect(await runner.run("f5", "fp-b", Date.now() + 1_000, async () => "b")).toEqual({ value: "b", cached: false });
    });

    it("under a crowd of two bodies and failing attempts, answers each request with its own body's result, made once", async () => {
      const runners = [runOnce({ forgetFailedRequest: true, pollMs: 2 }), runOnce({ forgetFailedRequest: true, pollMs: 2 })];
      for (let round = 0; round < 8; round++) {
        const key = `crowd-${round}`;
        let successes = 0;
        const attempt = async (i: number) => {
          const print = i % 3 === 0 ? "fp-b" : "fp-a";
          await pause((i * 7) % 23);
          try {
            const once = await runners[i % 2]!.run(key, print, far(), async () => {
              await pause(5 + ((i * 11) % 17));
              // Most attempts fail, so the key changes hands between bodies.
              if ((i + round) % 4 !== 0) throw new Error("refused");
              successes++;
              return print;
            });
            return { print, value: once.value };
          } catch (err) {
            return { print, error: err instanceof Error ? err.message : String(err) };
          }
        };
        const outcomes = await Promise.all(Array.from({ length: 24 }, (_, i) => attempt(i)));
        expect(successes).toBeLessThanOrEqual(1);
        for (const outcome of outcomes) {
          if ("value" in outcome) expect(outcome.value).toBe(outcome.print);
          else expect(["refused", "this key was already used for a different request"]).toContain(outcome.error);
        }
      }
    });

    it("leaves a different request's fingerprint alone when it fails", async () => {
      const runner = runOnce({ forgetFailedRequest: true });
      await expect(
        runner.run("f6", "fp-a", far(), async () => {
          // Cannot happen while the claim is held; the failing holder still deletes only its own.
          await store.values.delete(fpKey("f6"));
          await store.values.set(fpKey("f6"), "fp-other", { ttlMs: 60_000 });
          throw new Error("fails");
        }),
      ).rejects.toThrow("fails");
      expect(await store.values.get(fpKey("f6"))).toBe("fp-other");
    });
  });
});
