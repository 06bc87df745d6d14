import { createLogger } from "@gw/runtime";
import { createMemoryFastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { type RouteRecord, StatusBook } from "./status-book.js";

const route = (chat: string, at: number, extra: Partial<RouteRecord> = {}): RouteRecord => ({ chat, threadId: "", agentId: "main", binding: -1, at, ...extra });

describe("StatusBook records", () => {
  it("reads a corrupt stored record as empty, says so in the log, and the next write replaces it", async () => {
    const store = createMemoryFastStore();
    const lines: string[] = [];
    const book = new StatusBook(store, createLogger({ service: "test", level: "error", destination: { write: (line: string) => lines.push(line) } }));
    await store.values.set("delivery:status:tg:default", "{not json");
    await store.values.set("delivery:status:tg:other", JSON.stringify({ lastError: 42 }));
    expect(await book.read("tg", "default")).toMatchObject({ lastError: "", lastSuccessAt: 0, lastRoutes: [] });
    expect(await book.read("tg", "other")).toMatchObject({ lastError: "" });
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ msg: "a corrupt account status record reads as empty", accountId: "default", problem: expect.stringContaining("not JSON") }),
      expect.objectContaining({ accountId: "other", problem: expect.stringContaining("record.lastError") }),
    ]);
    book.inboundFailure("tg", "default", "boom");
    await book.settled();
    expect((await book.read("tg", "default")).lastInboundError).toBe("boom");
  });

  it("reads a record written before a field existed with that field empty", async () => {
    const store = createMemoryFastStore();
    await store.values.set("delivery:status:tg:default", JSON.stringify({ lastSuccessAt: 5 }));
    expect(await new StatusBook(store).read("tg", "default")).toMatchObject({ lastSuccessAt: 5, lastInboundError: "", lastRoutes: [] });
  });
});

describe("StatusBook routes", () => {
  it("keeps one entry per chat and thread, most recent first", async () => {
    const book = new StatusBook(createMemoryFastStore());
    book.routed("tg", "default", route("1", 1));
    book.routed("tg", "default", route("2", 2, { agentId: "support", binding: 0 }));
    book.routed("tg", "default", route("2", 3, { threadId: "7", agentId: "personal", binding: 1 }));
    book.routed("tg", "default", route("1", 4, { agentId: "support", binding: 0 }));
    await book.settled();
    expect((await book.read("tg", "default")).lastRoutes).toEqual([
      route("1", 4, { agentId: "support", binding: 0 }),
      route("2", 3, { threadId: "7", agentId: "personal", binding: 1 }),
      route("2", 2, { agentId: "support", binding: 0 }),
    ]);
    expect((await book.read("tg", "other")).lastRoutes).toEqual([]);
  });

  it("keeps the 20 most recent chats, and the other fields of the record", async () => {
    const book = new StatusBook(createMemoryFastStore());
    book.inboundFailure("tg", "default", "boom");
    for (let i = 0; i < 25; i++) book.routed("tg", "default", route(String(i), i));
    await book.settled();
    const record = await book.read("tg", "default");
    expect(record.lastRoutes.map((r) => r.chat)).toEqual(Array.from({ length: 20 }, (_, i) => String(24 - i)));
    expect(record.lastInboundError).toBe("boom");
  });
});
