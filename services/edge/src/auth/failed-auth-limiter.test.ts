import { createSubjects, InProcessBus } from "@gw/bus";
import { AuthBlocked, isGatewayError } from "@gw/contracts";
import { createMemoryFastStore } from "@gw/store";
import { waitFor } from "@gw/testing";
import { afterEach, describe, expect, it } from "vitest";
import { FailedAuthLimiter } from "./failed-auth-limiter.js";

const LIMITS = { max: 3, windowMs: 60_000 };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return isGatewayError(err) ? err.code : "not a GatewayError";
  }
}

describe("FailedAuthLimiter", () => {
  const bus = new InProcessBus();
  const subjects = createSubjects("gw");
  const store = createMemoryFastStore();
  const limiters: FailedAuthLimiter[] = [];
  const limiter = () => {
    const made = new FailedAuthLimiter(store.counters, LIMITS, { bus, subjects });
    limiters.push(made);
    return made;
  };
  afterEach(() => {
    for (const l of limiters.splice(0)) l.close();
  });

  it("blocks an IP on the failure that reaches the limit, on every edge, with a Retry-After", async () => {
    const [a, b] = [limiter(), limiter()];
    await a.recordFailure("10.0.0.1");
    await b.recordFailure("10.0.0.1");
    expect(codeOf(() => a.assertAllowed("10.0.0.1"))).toBeUndefined();
    await a.recordFailure("10.0.0.1"); // the third: reaches the limit, answered as a plain failure
    expect(codeOf(() => a.assertAllowed("10.0.0.1"))).toBe("RATE_LIMITED");
    await waitFor(() => (codeOf(() => b.assertAllowed("10.0.0.1")) === "RATE_LIMITED" ? true : undefined));
    try {
      b.assertAllowed("10.0.0.1");
    } catch (err) {
      expect(isGatewayError(err) && err.details).toMatchObject({ retryAfterSeconds: expect.any(Number) });
      const seconds = (isGatewayError(err) && (err.details as { retryAfterSeconds: number }).retryAfterSeconds) || 0;
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(60);
    }
    expect(codeOf(() => b.assertAllowed("10.0.0.2"))).toBeUndefined();
  });

  it("refuses as RATE_LIMITED a failure past the limit on an edge that missed the broadcast", async () => {
    const deaf = new FailedAuthLimiter(store.counters, LIMITS); // no bus: hears nothing
    limiters.push(deaf);
    const loud = limiter();
    for (let i = 0; i < 3; i++) await loud.recordFailure("10.0.0.3");
    expect(codeOf(() => deaf.assertAllowed("10.0.0.3"))).toBeUndefined();
    await expect(deaf.recordFailure("10.0.0.3")).rejects.toMatchObject({ code: "RATE_LIMITED" });
    expect(codeOf(() => deaf.assertAllowed("10.0.0.3"))).toBe("RATE_LIMITED");
  });

  it("refuses a check waiting for its turn as soon as the IP is blocked elsewhere", async () => {
    const l = limiter();
    const ip = "10.0.0.5";
    await l.recordFailure(ip);
    await l.recordFailure(ip); // one failure left: one check at a time
    let finish!: (ok: boolean) => void;
    const first = l.check(ip, () => new Promise<boolean>((resolve) => (finish = resolve)), (ok) => !ok);
    const second = l.check(ip, async () => true, (ok) => !ok);
    await waitFor(() => finish);
    bus.publish(subjects.broadcast("auth.blocked"), AuthBlocked.encode({ clientIp: ip, blockedForMs: 30_000 }).finish());
    await expect(second).rejects.toMatchObject({ code: "RATE_LIMITED" });
    finish(true);
    expect(await first).toBe(true);
  });

  it("waits for other edges' checks that hold the budget, then refuses without checking", async () => {
    const l = limiter();
    const ip = "10.0.0.6";
    await l.recordFailure(ip);
    await store.counters.hit(`authfail:${ip}`, LIMITS.windowMs, 2 ** 32 * 2); // two checks under way elsewhere
    let checked = false;
    const started = Date.now();
    const refused = l.check(ip, async () => (checked = true), () => false);
    await expect(refused).rejects.toMatchObject({ code: "RATE_LIMITED", details: { retryAfterSeconds: 1 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(checked).toBe(false);
    // Each try gave its slot back.
    await waitFor(async () => ((await store.counters.peek(`authfail:${ip}`)).count === 2 ** 32 * 2 + 1 ? true : undefined));
  });

  it("ignores undecodable broadcasts and lets blocks lapse", async () => {
    const l = limiter();
    bus.publish(subjects.broadcast("auth.blocked"), new Uint8Array([0xff, 0xff, 0xff]));
    bus.publish(subjects.broadcast("auth.blocked"), AuthBlocked.encode({ clientIp: "10.0.0.4", blockedForMs: 40 }).finish());
    await waitFor(() => (codeOf(() => l.assertAllowed("10.0.0.4")) === "RATE_LIMITED" ? true : undefined));
    await waitFor(() => (codeOf(() => l.assertAllowed("10.0.0.4")) === undefined ? true : undefined));
  });
});
