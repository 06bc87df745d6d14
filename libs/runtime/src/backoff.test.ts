import { describe, expect, it } from "vitest";
import { type BackoffPolicy, retryDelay, sleep } from "./backoff.js";

describe("retryDelay", () => {
  const full: BackoffPolicy = { baseMs: 100, capMs: 1_000, jitter: "full" };

  it("doubles from the base up to the cap without jitter", () => {
    const none: BackoffPolicy = { baseMs: 1_000, capMs: 60_000, jitter: "none" };
    expect(Array.from({ length: 9 }, (_, attempt) => retryDelay(attempt, none))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000,
    ]);
    // Far past the cap the exponent overflows to Infinity, and the cap still holds.
    expect(retryDelay(5_000, none)).toBe(60_000);
  });

  it("stays within [0, min(cap, base * 2^attempt)] for any jitter", () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const ceiling = Math.min(1_000, 100 * 2 ** attempt);
      for (const r of [0, 0.001, 0.25, 0.5, 0.999, 1]) {
        const delay = retryDelay(attempt, { ...full, random: () => r });
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
    expect(retryDelay(2, { ...full, random: () => 0.5 })).toBe(200);
  });

  it("spreads delays over the whole window with the real random source", () => {
    const delays = Array.from({ length: 400 }, () => retryDelay(3, full));
    expect(Math.min(...delays)).toBeLessThan(200);
    expect(Math.max(...delays)).toBeGreaterThan(600);
    expect(Math.max(...delays)).toBeLessThanOrEqual(800);
  });
});

describe("sleep", () => {
  it("resolves after the wait when nothing aborts it", async () => {
    await expect(sleep(5, new AbortController().signal)).resolves.toBeUndefined();
    await expect(sleep(5)).resolves.toBeUndefined();
  });

  it("rejects with the signal's own reason, also when it had fired before", async () => {
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    const reason = new Error("stop");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(sleep(1, controller.signal)).rejects.toBe(reason);
  });
});
