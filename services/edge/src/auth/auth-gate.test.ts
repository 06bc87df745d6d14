import { setTimeout as sleep } from "node:timers/promises";
import { createSubjects, InProcessBus } from "@gw/bus";
import { isGatewayError } from "@gw/contracts";
import { type CounterStore, createMemoryFastStore } from "@gw/store";
import { waitFor } from "@gw/testing";
import { afterEach, describe, expect, it } from "vitest";
import { AuthGate } from "./auth-gate.js";
import type { AuthAttempt } from "./authenticate.js";
import { TrustedProxies } from "./client-address.js";
import { FailedAuthLimiter } from "./failed-auth-limiter.js";

const PASSWORD = "the-right-password";
const LIMITS = { max: 20, windowMs: 60_000 };
const IP = "203.0.113.7";

/** A counter store whose every call takes `delayMs` (a Redis round trip), and that counts its calls. */
function countingStore(inner: CounterStore, delayMs: number): CounterStore & { calls: string[] } {
  const calls: string[] = [];
  const slow = async <T>(name: string, op: () => Promise<T>): Promise<T> => {
    calls.push(name);
    if (delayMs > 0) await sleep(delayMs);
    return op();
  };
  return {
    calls,
    hit: (key, windowMs, by) => slow("hit", () => inner.hit(key, windowMs, by)),
    giveBack: (key, by) => slow("giveBack", () => inner.giveBack(key, by)),
    peek: (key) => inner.peek(key),
    reset: (key) => inner.reset(key),
  };
}

function attempt(credential: string): AuthAttempt {
  return { peerIp: IP, host: "gateway.example", headers: {}, credential };
}

/** "OK" or the error code, per call, in call order. */
async function outcomes(calls: Array<Promise<unknown>>): Promise<string[]> {
  return Promise.all(calls.map((call) => call.then(() => "OK", (err: unknown) => (isGatewayError(err) ? err.code : String(err)))));
}

function tally(codes: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const code of codes) out[code] = (out[code] ?? 0) + 1;
  return out;
}

describe("AuthGate under concurrent guesses (failed-auth limiter)", () => {
  const bus = new InProcessBus();
  const subjects = createSubjects("gw");
  const limiters: FailedAuthLimiter[] = [];
  afterEach(() => {
    for (const l of limiters.splice(0)) l.close();
  });

  /** One edge: a gate and its limiter on `counters`; `failedChecks` counts the secrets checked and found wrong. */
  function edge(counters: CounterStore) {
    const failed: string[] = [];
    const watcher = { failed: (ip: string) => failed.push(ip), blocked: () => undefined };
    const limiter = new FailedAuthLimiter(counters, LIMITS, { bus, subjects }, watcher);
    limiters.push(limiter);
    const gate = new AuthGate(
      {
        password: PASSWORD,
        allowLoopback: false,
        overlayMode: "disabled",
        trustedProxy: { enabled: false, header: "x-user" },
        trustedProxies: new TrustedProxies([]),
        pairingEnabled: false,
      },
      limiter,
    );
    return { gate, failedChecks: () => failed.length };
  }

  const guesses = (n: number, rightAt: number) => Array.from({ length: n }, (_, i) => (i === rightAt ? PASSWORD : `wrong-${i}`));

  it.each([
    { store: "memory", delayMs: 0, where: "last", rightAt: 99 },
    { store: "memory", delayMs: 0, where: "in the middle", rightAt: 50 },
    { store: "slow (2 ms a call)", delayMs: 2, where: "last", rightAt: 99 },
    { store: "slow (2 ms a call)", delayMs: 2, where: "in the middle", rightAt: 50 },
  ])("checks at most 20 of 100 concurrent guesses against a $store store, and refuses the right one ($where)", async ({ delayMs, rightAt }) => {
    const store = countingStore(createMemoryFastStore().counters, delayMs);
    const { gate, failedChecks } = edge(store);
    const codes = await outcomes(guesses(100, rightAt).map((secret) => gate.authorize(attempt(secret), IP)));
    expect(failedChecks()).toBe(20);
    expect(codes[rightAt]).toBe("RATE_LIMITED");
    expect(tally(codes)).toEqual({ UNAUTHORIZED: 20, RATE_LIMITED: 80 });
  });

  it("gives the auditor's 500 guesses, the right one 400th, 20 answers and 480 refusals", async () => {
    const { gate, failedChecks } = edge(countingStore(createMemoryFastStore().counters, 2));
    const codes = await outcomes(guesses(500, 399).map((secret) => gate.authorize(attempt(secret), IP)));
    expect(tally(codes)).toEqual({ UNAUTHORIZED: 20, RATE_LIMITED: 480 });
    expect(failedChecks()).toBe(20);
    await expect(gate.authorize(attempt(PASSWORD), IP)).rejects.toMatchObject({ code: "RATE_LIMITED" });
  });

  it("shares the budget between two edges on one store: no more than 20 answered, the right one refused on both", async () => {
    const store = countingStore(createMemoryFastStore().counters, 2);
    const [a, b] = [edge(store), edge(store)];
    const codes = await outcomes(guesses(200, 199).map((secret, i) => (i % 2 === 0 ? a : b).gate.authorize(attempt(secret), IP)));
    expect(codes[199]).toBe("RATE_LIMITED");
    expect(codes.filter((c) => c === "UNAUTHORIZED").length).toBeLessThanOrEqual(20);
    expect(codes.filter((c) => c === "OK")).toEqual([]);
    expect(a.failedChecks() + b.failedChecks()).toBe(20);
    for (const { gate } of [a, b]) await expect(gate.authorize(attempt(PASSWORD), IP)).rejects.toMatchObject({ code: "RATE_LIMITED" });
  });

  it("lets right secrets through, all at once or one by one, and gives every slot back", async () => {
    const inner = createMemoryFastStore().counters;
    const store = countingStore(inner, 2);
    const { gate } = edge(store);
    const rightOnes = (n: number) => outcomes(Array.from({ length: n }, () => gate.authorize(attempt(PASSWORD), IP)));
    for (let i = 0; i < 5; i++) await gate.authorize(attempt(PASSWORD), IP);
    expect(tally(await rightOnes(60))).toEqual({ OK: 60 });
    // From an IP with no failures, one by one or all at once: no store call at all.
    expect(store.calls).toEqual([]);
    // A few failures, then more right ones at once than the budget left: they wait their turn.
    expect(tally(await outcomes(guesses(5, -1).map((s) => gate.authorize(attempt(s), IP))))).toEqual({ UNAUTHORIZED: 5 });
    expect(tally(await rightOnes(60))).toEqual({ OK: 60 });
    await waitFor(async () => ((await inner.peek(`authfail:${IP}`)).count === 5 ? true : undefined));
  });

  it("lets more right secrets through at once than the budget left, on two edges (they wait for each other)", async () => {
    const store = countingStore(createMemoryFastStore().counters, 2);
    const [a, b] = [edge(store), edge(store)];
    const failures = guesses(10, -1).map((secret, i) => (i % 2 === 0 ? a : b).gate.authorize(attempt(secret), IP));
    expect(tally(await outcomes(failures))).toEqual({ UNAUTHORIZED: 10 });
    const codes = await outcomes(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).gate.authorize(attempt(PASSWORD), IP)));
    expect(tally(codes)).toEqual({ OK: 60 });
  });

  it("counts nothing for a check that throws, and gives its slot back", async () => {
    const inner = createMemoryFastStore().counters;
    const limiter = new FailedAuthLimiter(inner, LIMITS);
    limiters.push(limiter);
    await limiter.recordFailure(IP);
    const down = new Error("store unavailable");
    await expect(limiter.check(IP, () => Promise.reject(down), () => true)).rejects.toBe(down);
    expect((await inner.peek(`authfail:${IP}`)).count).toBe(1);
  });
});
