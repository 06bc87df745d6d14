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

  it("ignores undecodable broadcasts and lets blocks lapse", async () => {
    const l = limiter();
    bus.publish(subjects.broadcast("auth.blocked"), new Uint8Array([0xff, 0xff, 0xff]));
    bus.publish(subjects.broadcast("auth.blocked"), AuthBlocked.encode({ clientIp: "10.0.0.4", blockedForMs: 40 }).finish());
    await waitFor(() => (codeOf(() => l.assertAllowed("10.0.0.4")) === "RATE_LIMITED" ? true : undefined));
    await waitFor(() => (codeOf(() => l.assertAllowed("10.0.0.4")) === undefined ? true : undefined));
  });
});
