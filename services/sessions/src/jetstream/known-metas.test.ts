import { describe, expect, it } from "vitest";
import { newMeta } from "../contract-helpers.js";
import { KnownMetas, REMEMBER_MS } from "./known-metas.js";

const at = (key: string, revision: number, model = `m${revision}`) => ({ meta: { ...newMeta(key), model }, revision });

function clocked(limit = 10) {
  let now = 1_000_000;
  const metas = new KnownMetas(limit, () => now);
  return { metas, advance: (ms: number) => (now += ms), now: () => now };
}

describe("KnownMetas", () => {
  it("keeps the highest revision whichever source arrives last", () => {
    const { metas, now } = clocked();
    metas.fill(0, "a", at("a", 5), now());
    metas.fill(0, "a", at("a", 3), now());
    expect(metas.get("a")?.revision).toBe(5);
    metas.watchedWrite(0, "a", at("a", 7));
    expect(metas.get("a")?.meta?.model).toBe("m7");
    metas.watchedWrite(0, "a", { meta: null, revision: 8 });
    expect(metas.get("a")).toEqual({ meta: null, revision: 8 });
  });

  it("never lets a read that was overtaken by the watch fill an uncached key", () => {
    const { metas, now } = clocked();
    const started = now();
    // The watch delivers revision 6 of a key nobody cached; a read begun before it returns 5.
    metas.watchedWrite(0, "a", at("a", 6));
    expect(metas.get("a")).toBeUndefined();
    metas.fill(0, "a", at("a", 5), started);
    expect(metas.get("a")).toBeUndefined();
    metas.fill(0, "a", at("a", 6), started);
    expect(metas.get("a")?.revision).toBe(6);
  });

  it("fills nothing from a read slower than the watch's memory, and forgets old deliveries", () => {
    const { metas, now, advance } = clocked();
    const started = now();
    advance(REMEMBER_MS);
    metas.fill(0, "a", at("a", 5), started);
    expect(metas.get("a")).toBeUndefined();
    metas.watchedWrite(0, "b", at("b", 9));
    advance(REMEMBER_MS);
    // A later delivery prunes the old one: b's 9 no longer holds back a read of 4.
    metas.watchedWrite(0, "c", at("c", 10));
    metas.fill(0, "b", at("b", 4), now());
    expect(metas.get("b")?.revision).toBe(4);
  });

  it("drops one partition's values and evicts the least recently used past its limit", () => {
    const { metas, now } = clocked(3);
    metas.fill(0, "a", at("a", 1), now());
    metas.fill(1, "b", at("b", 2), now());
    metas.fill(0, "c", at("c", 3), now());
    metas.get("a");
    metas.fill(1, "d", at("d", 4), now());
    expect(metas.get("b")).toBeUndefined();
    expect(metas.size).toBe(3);
    metas.dropPartition(0);
    expect([metas.get("a"), metas.get("c")]).toEqual([undefined, undefined]);
    expect(metas.get("d")?.revision).toBe(4);
  });
});
