import { describe, expect, it } from "vitest";
import type { Batch, StoredEntry } from "../model.js";
import { TailCache } from "./tail-cache.js";

const entry = (body: string): StoredEntry => ({
  id: `id-${body}`,
  parentId: "",
  role: "user",
  sender: "",
  body,
  timestamp: 0,
  runId: "",
  kind: "message",
  meta: "",
});
const batch = (bodies: string[], base = false, gen = "g"): Batch => ({
  gen,
  base,
  count: bodies.length,
  at: 0,
  entries: bodies.map(entry),
});
const bodies = (entries: StoredEntry[] | undefined) => entries?.map((e) => e.body);
const LIMITS = { sessions: 100, entries: 100, bytes: 1e9 };

describe("TailCache", () => {
  it("answers only for the version and generation it was filled for", () => {
    const cache = new TailCache(LIMITS);
    cache.fill("k", "g", 7, [entry("b"), entry("a")], true);
    expect(bodies(cache.read("k", "g", 7, 5))).toEqual(["b", "a"]);
    expect(bodies(cache.read("k", "g", 7, 1))).toEqual(["b"]);
    expect(cache.read("k", "g", 8, 5)).toBeUndefined();
    expect(cache.read("k", "other", 7, 5)).toBeUndefined();
    expect(cache.read("other", "g", 7, 5)).toBeUndefined();
  });

  it("answers a partial tail only for limits it holds", () => {
    const cache = new TailCache(LIMITS);
    cache.fill("k", "g", 1, [entry("c"), entry("b")], false);
    expect(bodies(cache.read("k", "g", 1, 2))).toEqual(["c", "b"]);
    expect(cache.read("k", "g", 1, 3)).toBeUndefined();
  });

  it("moves a tail forward with this process's writes, and drops it when it missed one", () => {
    const cache = new TailCache(LIMITS);
    cache.fill("k", "g", 1, [entry("a")], true);
    cache.written("k", 1, 2, batch(["b", "c"]));
    expect(bodies(cache.read("k", "g", 2, 10))).toEqual(["c", "b", "a"]);
    // Another replica wrote version 3: a write on top of it cannot be put after version 2.
    cache.written("k", 3, 4, batch(["e"]));
    expect(cache.read("k", "g", 4, 10)).toBeUndefined();
    expect(cache.size.sessions).toBe(0);
  });

  it("replaces a tail with a base (reset, compaction) and forgets deleted sessions", () => {
    const cache = new TailCache(LIMITS);
    cache.fill("k", "g", 1, [entry("b"), entry("a")], true);
    cache.written("k", 1, 2, batch(["summary"], true));
    expect(bodies(cache.read("k", "g", 2, 10))).toEqual(["summary"]);
    cache.written("k", 5, 6, batch([], true));
    expect(bodies(cache.read("k", "g", 6, 10))).toEqual([]);
    cache.forget("k");
    expect(cache.read("k", "g", 6, 10)).toBeUndefined();
    expect(cache.size).toEqual({ sessions: 0, bytes: 0 });
  });

  it("leaves sessions it never read uncached", () => {
    const cache = new TailCache(LIMITS);
    cache.written("k", 0, 1, batch(["a"]));
    cache.written("k", 1, 2, batch(["a"], true));
    expect(cache.size.sessions).toBe(0);
  });

  it("keeps at most `entries` newest entries per session, then answers only up to them", () => {
    const cache = new TailCache({ ...LIMITS, entries: 3 });
    cache.fill("k", "g", 1, [entry("b"), entry("a")], true);
    cache.written("k", 1, 2, batch(["c", "d"]));
    expect(bodies(cache.read("k", "g", 2, 3))).toEqual(["d", "c", "b"]);
    expect(cache.read("k", "g", 2, 4)).toBeUndefined();
  });

  it("evicts the least recently read session past `sessions`", () => {
    const cache = new TailCache({ ...LIMITS, sessions: 2 });
    cache.fill("a", "g", 1, [entry("a")], true);
    cache.fill("b", "g", 1, [entry("b")], true);
    cache.read("a", "g", 1, 1);
    cache.fill("c", "g", 1, [entry("c")], true);
    expect(cache.size.sessions).toBe(2);
    expect(cache.read("b", "g", 1, 1)).toBeUndefined();
    expect(bodies(cache.read("a", "g", 1, 1))).toEqual(["a"]);
    expect(bodies(cache.read("c", "g", 1, 1))).toEqual(["c"]);
  });

  it("stays under its byte budget and never caches one session that would take a quarter of it", () => {
    const cache = new TailCache({ ...LIMITS, bytes: 40_000 });
    for (let i = 0; i < 50; i++) cache.fill(`k${i}`, "g", 1, [entry("x".repeat(1_000))], true);
    expect(cache.size.bytes).toBeLessThanOrEqual(40_000);
    expect(cache.size.sessions).toBeGreaterThan(5);
    expect(cache.read("k49", "g", 1, 1)).toBeDefined();
    cache.fill("huge", "g", 1, [entry("x".repeat(10_000))], true);
    expect(cache.read("huge", "g", 1, 1)).toBeUndefined();
    expect(cache.size.bytes).toBeLessThanOrEqual(40_000);
  });
});
