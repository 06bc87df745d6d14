import { describe, expect, it } from "vitest";
import { type SessionRow, SessionList } from "./session-list.js";

const row = (key: string, agentId = "main", updatedAt = 1): SessionRow => ({ key, agentId, model: "m/x", createdAt: 1, updatedAt, messageCount: 2 });
const keys = (list: SessionList, search = "") => list.matching(search).map((r) => r.key);

describe("SessionList", () => {
  it("appends pages and says where the next one starts and whether there is one", () => {
    const list = new SessionList();
    expect(list.hasMore).toBe(false);
    list.addPage([row("a"), row("b")], 3);
    expect(list.nextOffset).toBe(2);
    expect(list.hasMore).toBe(true);
    list.addPage([row("c")], 3);
    expect(keys(list)).toEqual(["a", "b", "c"]);
    expect(list.hasMore).toBe(false);
  });

  it("puts a created session on top and counts it, so the next page does not repeat a row", () => {
    const list = new SessionList();
    list.addPage([row("b"), row("c")], 4);
    expect(list.created("a", "main", 5)).toBe(true);
    expect(list.size).toBe(5);
    // The gateway's order shifted by one too: the page at offset 3 starts after c.
    expect(list.nextOffset).toBe(3);
    list.addPage([row("c"), row("d")], 5);
    expect(keys(list)).toEqual(["a", "b", "c", "d"]);
    expect(list.created("a", "main", 6)).toBe(false);
    expect(list.size).toBe(5);
  });

  it("ignores another agent's sessions when filtered and drops one patched to another agent", () => {
    const list = new SessionList("main");
    list.addPage([row("a"), row("b")], 2);
    expect(list.created("x", "echo", 5)).toBe(false);
    expect(keys(list)).toEqual(["a", "b"]);
    expect(list.updated("a", { agentId: "echo", model: "builtin/echo" }, 6)).toBe(true);
    expect(keys(list)).toEqual(["b"]);
    expect(list.size).toBe(1);
  });

  it("applies changed settings in place", () => {
    const list = new SessionList();
    list.addPage([row("a")], 1);
    list.updated("a", { model: "fake/other", thinking: "high" }, 9);
    expect(list.get("a")).toMatchObject({ model: "fake/other", thinking: "high", updatedAt: 9, agentId: "main" });
    expect(list.updated("unknown", { model: "x/y" }, 9)).toBe(false);
  });

  it("forgets a deleted session once", () => {
    const list = new SessionList();
    list.addPage([row("a"), row("b")], 2);
    expect(list.removed("a")).toBe(true);
    expect(list.removed("a")).toBe(false);
    expect(keys(list)).toEqual(["b"]);
    expect(list.size).toBe(1);
  });

  it("searches held keys by any part, in any case", () => {
    const list = new SessionList();
    list.addPage([row("tg:5001"), row("webchat:Alice"), row("webchat:alice:notes")], 3);
    expect(keys(list, "ALICE")).toEqual(["webchat:Alice", "webchat:alice:notes"]);
    expect(keys(list, " tg: ")).toEqual(["tg:5001"]);
    expect(keys(list, "nothing")).toEqual([]);
  });
});
