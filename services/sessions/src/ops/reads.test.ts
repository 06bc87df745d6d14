import { describe, expect, it } from "vitest";
import type { StoredEntry } from "../model.js";
import { withinReplyBudget } from "./reads.js";

const entry = (id: string, bodyBytes: number): StoredEntry => ({
  id,
  parentId: "",
  role: "user",
  sender: "",
  body: "x".repeat(bodyBytes),
  timestamp: 0,
  runId: "",
  kind: "message",
  meta: "",
});

describe("withinReplyBudget", () => {
  it("keeps every entry of a history that fits", () => {
    const newestFirst = [entry("c", 100), entry("b", 100), entry("a", 100)];
    expect(withinReplyBudget(newestFirst, 10_000)).toBe(newestFirst);
  });

  it("keeps the newest entries that fit, newest first", () => {
    const newestFirst = [entry("d", 400), entry("c", 400), entry("b", 400), entry("a", 400)];
    expect(withinReplyBudget(newestFirst, 1_200).map((e) => e.id)).toEqual(["d", "c"]);
  });

  it("always keeps the newest entry, however big", () => {
    expect(withinReplyBudget([entry("b", 5_000), entry("a", 10)], 1_000).map((e) => e.id)).toEqual(["b"]);
  });
});
