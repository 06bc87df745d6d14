import { afterEach, describe, expect, it, vi } from "vitest";
import { type RetryPolicy, retryDelayMs, retryWithBackoff } from "./backoff.js";
import { HttpError } from "./http-error.js";

const status = (code: number, retryAfterMs?: number) =>
  new HttpError(`HTTP ${code}`, { kind: "status", status: code, retryable: code === 429 || code >= 500, retryAfterMs });

describe("retryDelayMs", () => {
  const policy: RetryPolicy = { attempts: 5, baseDelayMs: 100, maxDelayMs: 1_000 };

  it("stays within [0, min(max, base * 2^attempt)] for any jitter", () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const ceiling = Math.min(1_000, 100 * 2 ** attempt);
      for (const r of [0, 0.001, 0.25, 0.5, 0.999, 1]) {
        const delay = retryDelayMs({ ...policy, random: () => r }, attempt);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it("spreads delays over the whole window with the real random source", () => {
    const delays = Array.from({ length: 400 }, () => retryDelayMs(policy, 3));
    expect(Math.min(...delays)).toBeLessThan(200);
    expect(Math.max(...delays)).toBeGreaterThan(600);
    expect(Math.max(...delays)).toBeLessThanOrEqual(800);
  });

  it("waits at least Retry-After, capped at four times maxDelayMs", () => {
    expect(retryDelayMs({ ...policy, random: () => 0 }, 0, 700)).toBe(700);
    expect(retryDelayMs({ ...policy, random: () => 1 }, 2, 10)).toBe(400);
    expect(retryDelayMs({ ...policy, random: () => 0 }, 0, 60_000)).toBe(4_000);
  });
});

describe("retryWithBackoff", () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const FAST = { attempts: 3, baseDelayMs: 1, maxDelayMs: 1, random: () => 0 };

  it("retries retryable failures and returns the first success", async () => {
    const seen: number[] = [];
    const result = await retryWithBackoff(async (attempt) => {
      seen.push(attempt);
      if (attempt < 2) throw status(503);
      return "ok";
    }, FAST);
    expect(result).toBe("ok");
    expect(seen).toEqual([0, 1, 2]);
  });

  it("throws the last failure as it was after the last attempt", async () => {
    const errors = [status(500), status(502), status(503)];
    let calls = 0;
    const err = await retryWithBackoff(async () => {
      throw errors[calls++];
    }, FAST).catch((e: unknown) => e);
    expect(calls).toBe(3);
    expect(err).toBe(errors[2]);
  });

  it("does not retry a 4xx, a plain Error, or what the caller's predicate refuses", async () => {
    for (const failure of [status(400), status(404), new Error("bug")]) {
      let calls = 0;
      await expect(
        retryWithBackoff(async () => {
          calls++;
          throw failure;
        }, FAST),
      ).rejects.toBe(failure);
      expect(calls).toBe(1);
    }
    let calls = 0;
    await expect(
      retryWithBackoff(
        async () => {
          calls++;
          throw new Error("flaky");
        },
        { ...FAST, retryable: (e) => (e as Error).message === "flaky" },
      ),
    ).rejects.toThrow("flaky");
    expect(calls).toBe(3);
  });

  it("waits for Retry-After before the next attempt and reports each wait", async () => {
    vi.useFakeTimers();
    const waits: number[] = [];
    let calls = 0;
    const result = retryWithBackoff(
      async () => {
        if (calls++ === 0) throw status(429, 3_000);
        return "ok";
      },
      { attempts: 3, baseDelayMs: 100, maxDelayMs: 1_000, random: () => 0, onRetry: ({ delayMs }) => waits.push(delayMs) },
    );
    await vi.advanceTimersByTimeAsync(2_999);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toBe("ok");
    expect(waits).toEqual([3_000]);
  });

  it("gives up at once when the server asks for longer than the cap", async () => {
    const tooLong = status(429, 60_000);
    let calls = 0;
    await expect(
      retryWithBackoff(async () => {
        calls++;
        throw tooLong;
      }, { attempts: 5, baseDelayMs: 100, maxDelayMs: 1_000 }),
    ).rejects.toBe(tooLong);
    expect(calls).toBe(1);
  });

  it("stops with the abort reason during a backoff, and does not start when already aborted", async () => {
    const controller = new AbortController();
    let calls = 0;
    const pending = retryWithBackoff(async () => {
      calls++;
      throw status(503, 30_000);
    }, { attempts: 3, baseDelayMs: 100, maxDelayMs: 60_000, signal: controller.signal });
    await vi.waitFor(() => expect(calls).toBe(1));
    const reason = new Error("shutting down");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(retryWithBackoff(async () => "never", { ...FAST, signal: controller.signal })).rejects.toBe(reason);
    expect(calls).toBe(1);
  });
});
