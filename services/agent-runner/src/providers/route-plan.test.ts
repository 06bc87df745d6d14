import { describe, expect, it } from "vitest";
import { ProviderError } from "./model-provider.js";
import {
  afterFailure,
  type Candidate,
  candidates,
  classifyFailure,
  type CoolState,
  keyName,
  planAttempts,
  providerCooldownMs,
  rateLimitCooldownMs,
  weightedOrder,
} from "./route-plan.js";

const entry = (ref: string) => ({ ref, provider: ref.split("/")[0]!, model: ref.split("/")[1]! });
const keys: Record<string, Array<{ id: string }>> = { a: [{ id: "k1" }, { id: "k2" }], b: [{ id: "-" }], c: [{ id: "-" }] };
const chain = [entry("a/x"), entry("b/y"), entry("c/z")];
const label = (cs: Candidate[]) => cs.map((c) => `${c.ref}#${c.key.id}`);
const cool = (providers: Record<string, number>, keyMs: Record<string, number> = {}): CoolState => ({
  providers: new Map(Object.entries(providers)),
  keys: new Map(Object.entries(keyMs)),
});

describe("the route plan", () => {
  it("lists the chain in order, each provider's keys from its turn on", () => {
    expect(label(candidates(chain, (p) => keys[p]!, () => 0))).toEqual(["a/x#k1", "a/x#k2", "b/y#-", "c/z#-"]);
    expect(label(candidates(chain, (p) => keys[p]!, () => 3))).toEqual(["a/x#k2", "a/x#k1", "b/y#-", "c/z#-"]);
  });

  it("skips cooling providers and keys, and tries the one ready soonest alone when all are cooling", () => {
    const all = candidates(chain, (p) => keys[p]!, () => 0);
    expect(label(planAttempts(all, cool({ a: 5_000 })))).toEqual(["b/y#-", "c/z#-"]);
    expect(label(planAttempts(all, cool({}, { [keyName("a", "k1")]: 100 })))).toEqual(["a/x#k2", "b/y#-", "c/z#-"]);
    expect(label(planAttempts(all, cool({ a: 900, b: 50, c: 700 })))).toEqual(["b/y#-"]);
  });

  it("moves to the next key after a 429, past the entry's other keys after a provider failure", () => {
    const all = candidates(chain, (p) => keys[p]!, () => 0);
    const [first, ...rest] = all;
    expect(label(afterFailure(rest, first!, "rate_limit"))).toEqual(["a/x#k2", "b/y#-", "c/z#-"]);
    expect(label(afterFailure(rest, first!, "server"))).toEqual(["b/y#-", "c/z#-"]);
    expect(label(afterFailure(rest, first!, "timeout"))).toEqual(["b/y#-", "c/z#-"]);
  });

  it("classifies failures: 429, 5xx, no status (timeouts, broken streams), and the rest as fatal", () => {
    const err = (status: number | undefined, retryable = true) => new ProviderError("x", { status, retryable });
    expect(classifyFailure(err(429))).toBe("rate_limit");
    expect(classifyFailure(err(503))).toBe("server");
    expect(classifyFailure(err(529))).toBe("server");
    expect(classifyFailure(err(undefined))).toBe("timeout");
    expect(classifyFailure(err(400, false))).toBe("fatal");
    expect(classifyFailure(new Error("bug"))).toBe("fatal");
  });

  it("cools a key for its Retry-After (capped), else 1 s doubled per 429 in a row up to a minute", () => {
    expect(rateLimitCooldownMs(30_000, 1)).toBe(30_000);
    expect(rateLimitCooldownMs(86_400_000, 1)).toBe(600_000);
    expect([1, 2, 3, 10].map((streak) => rateLimitCooldownMs(undefined, streak))).toEqual([1_000, 2_000, 4_000, 60_000]);
  });

  it("cools a provider from its third failure in the window, longer with each further one", () => {
    expect([1, 2, 3, 4, 9].map(providerCooldownMs)).toEqual([0, 0, 5_000, 10_000, 60_000]);
  });

  it("draws the order of neighbouring weighted deployments of one model by weight, and keeps every other entry in place", () => {
    const pool = [entry("east/gpt"), entry("west/gpt"), entry("anth/claude")];
    const weights: Record<string, number> = { east: 3, west: 1, anth: 1 };
    const refs = (draws: number[]) => weightedOrder(pool, (p) => weights[p], () => draws.shift()!).map((e) => e.ref);
    // u^(1/w): east 0.5^(1/3) = 0.79 beats west 0.5; west 0.9 beats east 0.79.
    expect(refs([0.5, 0.5, 0.5])).toEqual(["east/gpt", "west/gpt", "anth/claude"]);
    expect(refs([0.5, 0.9, 0.5])).toEqual(["west/gpt", "east/gpt", "anth/claude"]);
    // No weight, or another model name: chain order.
    expect(weightedOrder(pool, () => undefined, () => 0.9).map((e) => e.ref)).toEqual(["east/gpt", "west/gpt", "anth/claude"]);
    const mixed = [entry("east/gpt"), entry("anth/claude"), entry("west/gpt")];
    expect(weightedOrder(mixed, (p) => weights[p], () => 0.1).map((e) => e.ref)).toEqual(["east/gpt", "anth/claude", "west/gpt"]);
  });

  it("sends about weight-proportional shares of first tries to each deployment", () => {
    const pool = [entry("east/gpt"), entry("west/gpt")];
    const weights: Record<string, number> = { east: 3, west: 1 };
    let seed = 1;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    const firsts = Array.from({ length: 4000 }, () => weightedOrder(pool, (p) => weights[p], random)[0]!.provider);
    const east = firsts.filter((p) => p === "east").length / firsts.length;
    expect(east).toBeGreaterThan(0.7);
    expect(east).toBeLessThan(0.8);
  });
});
