import { describe, expect, it } from "vitest";
import { waitFor, waitUntil } from "./wait-for.js";

describe("waitFor", () => {
  it("returns the first defined value, treating throws as not yet", async () => {
    let calls = 0;
    const value = await waitFor(
      () => {
        calls++;
        if (calls === 1) throw new Error("booting");
        return calls >= 3 ? "ready" : undefined;
      },
      { intervalMs: 1 },
    );
    expect(value).toBe("ready");
    expect(calls).toBe(3);
  });

  it("accepts falsy values other than undefined", async () => {
    expect(await waitFor(async () => 0)).toBe(0);
    expect(await waitFor(() => false)).toBe(false);
  });

  it("gives up after the timeout and names what it waited for and the last error", async () => {
    await expect(
      waitFor(
        () => {
          throw new Error("connection refused");
        },
        { timeoutMs: 60, intervalMs: 10, what: "redis to answer" },
      ),
    ).rejects.toThrow("timed out after 60 ms waiting for redis to answer: connection refused");
  });
});

describe("waitUntil", () => {
  it("returns once the condition holds, sync or async", async () => {
    let polls = 0;
    await waitUntil(() => ++polls === 3, { intervalMs: 1 });
    expect(polls).toBe(3);
    await waitUntil(async () => true);
  });

  it("gives up after the timeout, naming what never held", async () => {
    await expect(waitUntil(() => false, { timeoutMs: 30, intervalMs: 5, what: "the lease to move" })).rejects.toThrow(
      "timed out after 30 ms waiting for the lease to move",
    );
  });
});
