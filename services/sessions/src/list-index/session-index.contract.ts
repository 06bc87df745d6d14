import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionMeta } from "../model.js";
import type { SessionIndex } from "./session-index.js";

function meta(key: string, updatedAt: number, agentId = "main"): SessionMeta {
  return {
    key,
    agentId,
    model: "builtin/echo",
    thinking: "",
    createdAt: 1,
    updatedAt,
    messageCount: 0,
    leafId: "",
    gen: randomUUID(),
    historySeq: 0,
  };
}

const keysOf = (page: { sessions: SessionMeta[] }) => page.sessions.map((s) => s.key);

export function describeSessionIndexContract(name: string, open: () => Promise<SessionIndex>): void {
  describe(`SessionIndex contract: ${name}`, () => {
    let index: SessionIndex;
    beforeEach(async () => {
      index = await open();
    });
    afterEach(async () => {
      await index.close();
    });

    it("pages newest first with the key breaking ties, with the total", async () => {
      await index.put(meta("b", 100), 1);
      await index.put(meta("a", 100), 1);
      await index.put(meta("c", 300), 1);
      await index.put(meta("d", 50), 1);
      expect(keysOf(await index.page({ agentId: "", offset: 0, limit: 10 }))).toEqual(["c", "a", "b", "d"]);
      const second = await index.page({ agentId: "", offset: 1, limit: 2 });
      expect(keysOf(second)).toEqual(["a", "b"]);
      expect(second.total).toBe(4);
      expect(await index.page({ agentId: "", offset: 4, limit: 10 })).toEqual({ sessions: [], total: 4 });
    });

    it("returns the metadata it was given", async () => {
      const m = { ...meta("web:with space/and|bars ü", 7), model: "other/model", messageCount: 3 };
      await index.put(m, 1);
      expect((await index.page({ agentId: "", offset: 0, limit: 1 })).sessions).toEqual([m]);
    });

    it("filters by agent and moves a session between agents", async () => {
      await index.put(meta("x", 1, "main"), 1);
      await index.put(meta("y", 2, "helper"), 1);
      await index.put(meta("z", 3, "helper"), 1);
      const helper = await index.page({ agentId: "helper", offset: 0, limit: 10 });
      expect(keysOf(helper)).toEqual(["z", "y"]);
      expect(helper.total).toBe(2);
      await index.put(meta("y", 4, "main"), 2);
      expect(keysOf(await index.page({ agentId: "main", offset: 0, limit: 10 }))).toEqual(["y", "x"]);
      expect((await index.page({ agentId: "helper", offset: 0, limit: 10 })).total).toBe(1);
      expect(await index.page({ agentId: "nobody", offset: 0, limit: 10 })).toEqual({ sessions: [], total: 0 });
    });

    it("moves a session to its new place when it changes, never listing it twice", async () => {
      await index.put(meta("old", 1), 1);
      await index.put(meta("new", 2), 1);
      await index.put(meta("old", 3), 2);
      const page = await index.page({ agentId: "", offset: 0, limit: 10 });
      expect(keysOf(page)).toEqual(["old", "new"]);
      expect(page.total).toBe(2);
    });

    it("ignores writes at or below the version it holds, removals included", async () => {
      await index.put(meta("k", 5), 5);
      await index.put(meta("k", 9), 4);
      await index.put(meta("k", 9), 5);
      expect((await index.page({ agentId: "", offset: 0, limit: 10 })).sessions[0]?.updatedAt).toBe(5);
      await index.remove("k", 3);
      expect((await index.page({ agentId: "", offset: 0, limit: 10 })).total).toBe(1);
      await index.remove("k", 6);
      expect((await index.page({ agentId: "", offset: 0, limit: 10 })).total).toBe(0);
      // A write from before the removal arrives late: the session stays gone.
      await index.put(meta("k", 9), 5.5);
      expect((await index.page({ agentId: "main", offset: 0, limit: 10 })).total).toBe(0);
      await index.put(meta("k", 10), 7);
      expect(keysOf(await index.page({ agentId: "main", offset: 0, limit: 10 }))).toEqual(["k"]);
    });

    it("keeps one epoch while its content lives", async () => {
      const first = await index.epoch();
      expect(first).not.toBe("");
      expect(await Promise.all([index.epoch(), index.epoch()])).toEqual([first, first]);
    });

    it("keeps one entry per key when writers race", async () => {
      await Promise.all(Array.from({ length: 40 }, (_, i) => index.put(meta("hot", 1000 + i), i + 1)));
      const page = await index.page({ agentId: "", offset: 0, limit: 10 });
      expect(page.total).toBe(1);
      expect(page.sessions[0]?.updatedAt).toBe(1039);
    });
  });
}
