import { describe, expect, it } from "vitest";
import { decodeMeta, encodeMeta } from "./meta-codec.js";

/** A record as the first version of the service wrote it (SessionMeta has kept these fields since). */
const FIRST_VERSION = {
  key: "agent:main:web:dm:alice",
  agentId: "main",
  model: "builtin/echo",
  thinking: "",
  createdAt: 1_763_800_000_000,
  updatedAt: 1_763_800_001_000,
  messageCount: 2,
  leafId: "e2",
  gen: "0f3c",
  historySeq: 7,
};

const bytes = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value), "utf8");

describe("stored session metadata", () => {
  it("reads a record in the first version's format, and round-trips what it writes", () => {
    expect(decodeMeta(bytes(FIRST_VERSION))).toEqual(FIRST_VERSION);
    expect(decodeMeta(encodeMeta(FIRST_VERSION))).toEqual(FIRST_VERSION);
  });

  it("ignores keys it does not know (a newer writer's)", () => {
    expect(decodeMeta(bytes({ ...FIRST_VERSION, label: "later" }))).toEqual(FIRST_VERSION);
  });

  it.each([
    ["not JSON", "{\"key\":"],
    ["not an object", "[1,2]"],
    ["a field missing", { ...FIRST_VERSION, gen: undefined }],
    ["a field of another type", { ...FIRST_VERSION, messageCount: "2" }],
  ])("reads %s as no session and says why", (_name, stored) => {
    const problems: string[] = [];
    expect(decodeMeta(bytes(stored), (problem) => problems.push(problem))).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).not.toBe("");
  });
});
