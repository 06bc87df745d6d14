import { createSubjects, InProcessBus } from "@gw/bus";
import { RunRegistry } from "@gw/runs";
import { createMemoryFastStore } from "@gw/store";
import { afterEach, describe, expect, it } from "vitest";
import { SessionLocks } from "./session-lock.js";

const subjects = createSubjects("test");
const buses: InProcessBus[] = [];
afterEach(async () => {
  for (const bus of buses.splice(0)) await bus.close();
});

/** Session locks over one registry, counting how often the store is asked for the lock. */
function setup(recheckMs: number, now?: () => number) {
  const bus = new InProcessBus();
  buses.push(bus);
  const registry = new RunRegistry(createMemoryFastStore(now ? { now } : {}));
  let tries = 0;
  const counted = Object.assign(Object.create(registry) as RunRegistry, {
    tryLockSession: (key: string, runId: string) => {
      tries++;
      return registry.tryLockSession(key, runId);
    },
  });
  const locks = new SessionLocks({ bus, subjects, registry: counted }, recheckMs);
  return { locks, registry, tries: () => tries };
}

const settledWithin = async (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), ms))]);

describe("SessionLocks", () => {
  it("hands the lock to a waiting run when the holder releases it, without asking the store meanwhile", async () => {
    const { locks, tries } = setup(60_000);
    await locks.acquire("s:1", "run-1", new AbortController().signal);
    const second = locks.acquire("s:1", "run-2", new AbortController().signal);
    expect(await settledWithin(second, 300)).toBe(false);
    // One look on arrival, one after subscribing: no polling while the holder runs.
    expect(tries()).toBe(3);
    await locks.release("s:1", "run-1");
    expect(await settledWithin(second, 1_000)).toBe(true);
  });

  it("lets runs on other sessions through at once", async () => {
    const { locks } = setup(60_000);
    await locks.acquire("s:1", "run-1", new AbortController().signal);
    expect(await settledWithin(locks.acquire("s:2", "run-2", new AbortController().signal), 1_000)).toBe(true);
  });

  it("stops waiting as soon as the run is aborted", async () => {
    const { locks } = setup(60_000);
    await locks.acquire("s:1", "run-1", new AbortController().signal);
    const abort = new AbortController();
    const waiting = locks.acquire("s:1", "run-2", abort.signal);
    abort.abort(new Error("aborted"));
    await expect(waiting).rejects.toThrow("aborted");
  });

  it("takes a lock whose holder died without a release once it lapses, by looking again", async () => {
    let now = Date.now();
    const { locks, registry } = setup(20, () => now);
    await locks.acquire("s:1", "dead-run", new AbortController().signal);
    const waiting = locks.acquire("s:1", "run-2", new AbortController().signal);
    expect(await settledWithin(waiting, 100)).toBe(false);
    now += registry.opts.heartbeatTtlMs * 2 + 1;
    expect(await settledWithin(waiting, 1_000)).toBe(true);
  });

  it("releases only the holder's lock", async () => {
    const { locks } = setup(60_000);
    await locks.acquire("s:1", "run-1", new AbortController().signal);
    const second = locks.acquire("s:1", "run-2", new AbortController().signal);
    await locks.release("s:1", "someone-else");
    expect(await settledWithin(second, 200)).toBe(false);
    await locks.release("s:1", "run-1");
    expect(await settledWithin(second, 1_000)).toBe(true);
  });
});
