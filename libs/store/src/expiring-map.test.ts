import { describe, expect, it } from "vitest";
import { ExpiringMap } from "./expiring-map.js";

describe("ExpiringMap", () => {
  it("hides entries at their deadline and keeps entries without a TTL", () => {
    let now = 0;
    const map = new ExpiringMap<string>(() => now);
    map.set("short", "a", 10);
    map.set("forever", "b");
    expect(map.ttl("short")).toBe(10);
    expect(map.ttl("forever")).toBe(Number.POSITIVE_INFINITY);
    now = 10;
    expect(map.get("short")).toBeUndefined();
    expect(map.get("forever")).toBe("b");
  });

  it("replace() keeps the deadline", () => {
    let now = 0;
    const map = new ExpiringMap<number>(() => now);
    map.set("c", 1, 100);
    now = 60;
    map.replace("c", 2);
    expect(map.get("c")).toBe(2);
    expect(map.ttl("c")).toBe(40);
    map.replace("absent", 5);
    expect(map.get("absent")).toBeUndefined();
  });

  it("sweep() frees expired entries that are never read again", () => {
    let now = 0;
    const map = new ExpiringMap<string>(() => now);
    for (let i = 0; i < 1_000; i++) map.set(`k${i}`, "x", 50);
    map.set("keep", "y", 500);
    expect(map.size).toBe(1_001);
    now = 50;
    map.sweep();
    expect(map.size).toBe(1);
  });
});
