import { describe, expect, it } from "vitest";
import { groupBySlot, hashTagOf, keySlot } from "./key-slot.js";

describe("Redis Cluster key slots", () => {
  it("matches the slots Redis documents and computes", () => {
    // CLUSTER KEYSLOT answers: 123456789 -> 12739 (the CRC16 check value 0x31C3), foo -> 12182.
    expect(keySlot("123456789")).toBe(12_739);
    expect(keySlot("foo")).toBe(12_182);
    expect(keySlot("")).toBe(0);
  });

  it("hashes only the first non-empty hash tag", () => {
    expect(hashTagOf("gw:val:run:{r1}")).toBe("r1");
    expect(keySlot("gw:val:run:{r1}")).toBe(keySlot("gw:val:runabort:{r1}"));
    expect(hashTagOf("a{}b{c}")).toBe("a{}b{c}");
    expect(hashTagOf("a{b}{c}")).toBe("b");
    expect(hashTagOf("a{b")).toBe("a{b");
  });

  it("groups keys by slot, keeping their order within a group", () => {
    const keys = ["run:{x}", "other", "runhb:{x}", "runabort:{x}"];
    const groups = groupBySlot(keys);
    expect(groups).toContainEqual([0, 2, 3]);
    expect(groups.flat().sort()).toEqual([0, 1, 2, 3]);
  });
});
