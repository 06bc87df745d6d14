import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AWKWARD_KEYS, expectChain, newMeta, textBatch, textEntry } from "./contract-helpers.js";
import type { Batch, SessionMeta, StoredEntry } from "./model.js";
import type { SessionRepository } from "./repository.js";

export interface RepositorySubject {
  repo: SessionRepository;
  /** A second repository over the same storage (another replica), where the adapter has one. */
  replica?(): Promise<SessionRepository>;
  /** Closes the repository and opens it again over the same storage (a restart). */
  reopen(): Promise<SessionRepository>;
  /**
   * What the storage still holds of `key`, one line per leftover, read beside the repository (its
   * files, its stream messages and KV value), so a session that is only hidden still shows.
   */
  leftovers(key: string): Promise<string[]>;
  /**
   * Waits until `repo` has seen what the replicas acknowledged, where `repo` answers from memory
   * and follows the others' writes a moment later (an owner of partitions); absent where every
   * read goes to storage.
   */
  settle?(): Promise<void>;
  dispose(): Promise<void>;
}

/** Every session this test's storage holds (tests store far fewer than a page's maximum). */
async function listAll(repo: SessionRepository): Promise<SessionMeta[]> {
  return (await repo.listPage({ agentId: "", offset: 0, limit: 500 })).sessions;
}

export function describeRepositoryContract(name: string, open: () => Promise<RepositorySubject>): void {
  describe(`SessionRepository contract: ${name}`, () => {
    let subject: RepositorySubject;
    let repo: SessionRepository;
    beforeEach(async () => {
      subject = await open();
      repo = subject.repo;
    });
    afterEach(async () => {
      await subject.dispose();
    });

    const created = async (key = `t:${randomUUID()}`) => (await repo.createMeta(newMeta(key))).meta;

    it("creates a session exactly once when callers race on a new key", async () => {
      const key = `race:${randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 20 }, () => repo.createMeta(newMeta(key))));
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.meta.gen)).size).toBe(1);
    });

    it("appends in order with parent links, reads the tail newest first and the branch oldest first", async () => {
      const meta = await created();
      await repo.append(meta, textBatch(meta, ["a"]));
      await repo.append(meta, textBatch(meta, ["b", "c"]));
      const { meta: after } = await repo.append(meta, textBatch(meta, ["d"]));
      expect(after.messageCount).toBe(4);
      const { entries, tip } = await repo.branch(meta);
      expectChain(entries, ["a", "b", "c", "d"]);
      expect(tip).toEqual({ count: 4, leafId: entries[3]!.id });
      expect(after.leafId).toBe(entries[3]!.id);
      expect((await repo.tail(meta, 3)).map((e) => e.body)).toEqual(["d", "c", "b"]);
      expect((await repo.tail(meta, 10)).map((e) => e.body)).toEqual(["d", "c", "b", "a"]);
      expect((await repo.getMeta(meta.key))?.messageCount).toBe(4);
    });

    it("reads a long tail across many batches, never past what was asked", async () => {
      const meta = await created();
      const bodies: string[] = [];
      for (let i = 0; i < 150; i++) {
        const batch = i % 10 === 0 ? [`b${i}a`, `b${i}b`] : [`b${i}`];
        bodies.push(...batch);
        await repo.append(meta, textBatch(meta, batch));
      }
      const newestFirst = [...bodies].reverse();
      expect((await repo.tail(meta, 200)).map((e) => e.body)).toEqual(newestFirst.slice(0, 165));
      expect((await repo.tail(meta, 100)).map((e) => e.body)).toEqual(newestFirst.slice(0, 100));
      expect((await repo.tail(meta, 7)).map((e) => e.body)).toEqual(newestFirst.slice(0, 7));
      expectChain((await repo.branch(meta)).entries, bodies);
    });

    it("keeps one linear chain under 50 concurrent appends", async () => {
      const meta = await created();
      const other = subject.replica ? await subject.replica() : repo;
      const bodies = Array.from({ length: 50 }, (_, i) => `m${i}`);
      await Promise.all(bodies.map((b, i) => (i % 2 ? other : repo).append(meta, textBatch(meta, [b]))));
      await subject.settle?.();
      const { entries } = await repo.branch(meta);
      expect(entries).toHaveLength(50);
      expectChain(entries);
      expect(new Set(entries.map((e) => e.body))).toEqual(new Set(bodies));
      expect((await repo.getMeta(meta.key))?.messageCount).toBe(50);
    });

    it("replaces the history only while it still ends where the caller read it", async () => {
      const meta = await created();
      await repo.append(meta, textBatch(meta, ["a", "b", "c"]));
      const { tip } = await repo.branch(meta);
      await repo.append(meta, textBatch(meta, ["d"]));
      const summary = textEntry("summary of a-c", "");
      const base: Batch = { gen: meta.gen, base: true, count: 1, at: Date.now(), entries: [summary] };
      expect(await repo.replace(meta, base, tip)).toBe(false);
      const fresh = await repo.branch(meta);
      expect(await repo.replace(meta, base, fresh.tip)).not.toBe(false);
      await repo.append(meta, textBatch(meta, ["e"]));
      const { entries } = await repo.branch(meta);
      expectChain(entries, ["summary of a-c", "e"]);
      expect((await repo.tail(meta, 20)).map((e) => e.body)).toEqual(["e", "summary of a-c"]);
      expect((await repo.getMeta(meta.key))?.messageCount).toBe(2);
    });

    it("resets to an empty history and keeps the session", async () => {
      const meta = await created();
      await repo.append(meta, textBatch(meta, ["a", "b"]));
      await repo.replace(meta, { gen: meta.gen, base: true, count: 0, at: Date.now(), entries: [] });
      expect(await repo.tail(meta, 5)).toEqual([]);
      expect((await repo.getMeta(meta.key))?.messageCount).toBe(0);
      await repo.append(meta, textBatch(meta, ["c"]));
      expectChain((await repo.branch(meta)).entries, ["c"]);
    });

    it("deletes for good; the key's next use starts an empty session", async () => {
      const meta = await created();
      await repo.append(meta, textBatch(meta, ["a"]));
      expect(await repo.delete(meta.key)).toBe(true);
      expect(await repo.getMeta(meta.key)).toBeNull();
      expect(await repo.delete(meta.key)).toBe(false);
      await expect(repo.append(meta, textBatch(meta, ["late"]))).rejects.toMatchObject({ code: "NOT_FOUND" });
      const again = await created(meta.key);
      expect(again.gen).not.toBe(meta.gen);
      expect(await repo.tail(again, 10)).toEqual([]);
      expect((await listAll(repo)).filter((m) => m.key === meta.key)).toHaveLength(1);
    });

    it("reclaims a deleted session's storage, history written before a reset included", async () => {
      const meta = await created();
      await repo.append(meta, textBatch(meta, ["a", "b"]));
      await repo.replace(meta, { gen: meta.gen, base: true, count: 0, at: Date.now(), entries: [] });
      await repo.append(meta, textBatch(meta, ["c"]));
      await repo.append(meta, textBatch(meta, ["d"]));
      // Its history and its metadata: the check below looks in the right place.
      expect(await subject.leftovers(meta.key)).toHaveLength(2);
      expect(await repo.delete(meta.key)).toBe(true);
      expect(await subject.leftovers(meta.key)).toEqual([]);
    });

    it("updates metadata with read-modify-write and lists every session", async () => {
      const a = await created();
      const b = await created();
      const res = await repo.updateMeta(a.key, (m) => ({ ...m, model: "other/model" }));
      expect(res?.before.model).toBe("builtin/echo");
      expect(res?.after.model).toBe("other/model");
      expect(await repo.updateMeta(`t:${randomUUID()}`, (m) => m)).toBeNull();
      const keys = (await listAll(repo)).map((m) => m.key);
      expect(keys).toEqual(expect.arrayContaining([a.key, b.key]));
      expect((await listAll(repo)).find((m) => m.key === a.key)?.model).toBe("other/model");
    });

    it("lists newest first by agent with totals, and follows every write at once, whichever replica made it", async () => {
      const other = subject.replica ? await subject.replica() : repo;
      const tag = randomUUID().slice(0, 8);
      const agent = `agent-${tag}`;
      // In the past, so the append below is the newest write whatever the clock's resolution.
      const at = Date.now() - 10_000;
      const metas = [0, 1, 2, 3].map((i) => ({ ...newMeta(`list:${tag}:${i}`, at + i), agentId: agent }));
      for (const m of metas) await repo.createMeta(m);
      const page = (offset: number, limit: number, r = repo) => r.listPage({ agentId: agent, offset, limit });
      expect((await page(0, 10)).sessions.map((m) => m.key)).toEqual(metas.map((m) => m.key).reverse());
      expect(await page(1, 2)).toMatchObject({ total: 4, sessions: [{ key: metas[2]!.key }, { key: metas[1]!.key }] });
      // An append by the other replica moves the oldest to the top, in this replica's next list.
      await other.append(metas[0]!, textBatch(metas[0]!, ["hello"]));
      const top = (await page(0, 1)).sessions[0];
      expect(top).toMatchObject({ key: metas[0]!.key, messageCount: 1 });
      await other.updateMeta(metas[1]!.key, (m) => ({ ...m, agentId: `${agent}-moved` }));
      expect((await page(0, 10)).total).toBe(3);
      expect((await repo.listPage({ agentId: `${agent}-moved`, offset: 0, limit: 5 })).sessions.map((m) => m.key)).toEqual([metas[1]!.key]);
      expect(await other.delete(metas[2]!.key)).toBe(true);
      expect((await page(0, 10)).sessions.map((m) => m.key)).toEqual([metas[0]!.key, metas[3]!.key]);
      expect((await page(5, 10)).sessions).toEqual([]);
    });

    it("creates many sessions with their histories at once, leaving existing keys alone", async () => {
      const existing = await created();
      const tag = randomUUID().slice(0, 8);
      const fresh = Array.from({ length: 30 }, (_, i) => ({ ...newMeta(`bulk:${tag}:${i}`, 1_000 + i), agentId: `bulk-${tag}` }));
      const chain = (n: number) => {
        const out: StoredEntry[] = [];
        for (let i = 0; i < n; i++) out.push(textEntry(`e${i}`, out.at(-1)?.id ?? ""));
        return out;
      };
      const sessions = [...fresh.map((meta, i) => ({ meta, entries: chain(i % 3) })), { meta: newMeta(existing.key), entries: chain(2) }];
      expect(await repo.createMany(sessions)).toBe(30);
      expect((await repo.getMeta(existing.key))?.gen).toBe(existing.gen);
      expect(await repo.tail(existing, 5)).toEqual([]);
      const listed = await repo.listPage({ agentId: `bulk-${tag}`, offset: 0, limit: 100 });
      expect(listed.total).toBe(30);
      expect(listed.sessions[0]).toMatchObject({ key: fresh[29]!.key, messageCount: 2 });
      const five = fresh[5]!;
      expect((await repo.preview(five.key, 10))?.entries.map((e) => e.body)).toEqual(["e1", "e0"]);
      await repo.append(five, textBatch(five, ["later"]));
      expectChain((await repo.branch(five)).entries, ["e0", "e1", "later"]);
      expect((await repo.getMeta(five.key))?.messageCount).toBe(3);
    });

    it("previews metadata and tail together, and null for an unknown key", async () => {
      const meta = await created();
      await repo.append(meta, textBatch(meta, ["a", "b"]));
      const found = await repo.preview(meta.key, 1);
      expect(found?.meta).toMatchObject({ key: meta.key, gen: meta.gen, messageCount: 2 });
      expect(found?.entries.map((e) => e.body)).toEqual(["b"]);
      expect(await repo.preview(`t:${randomUUID()}`, 5)).toBeNull();
    });

    it("shows every write in the next tail read, whichever replica made it", async () => {
      const meta = await created();
      const other = subject.replica ? await subject.replica() : repo;
      const bodies = async (r: SessionRepository, limit = 20) => (await r.tail(meta, limit)).map((e) => e.body);
      await repo.append(meta, textBatch(meta, ["a"]));
      // Read on both sides first, so any cached tail has something to go stale.
      expect(await bodies(repo)).toEqual(["a"]);
      expect(await bodies(other)).toEqual(["a"]);
      await other.append(meta, textBatch(meta, ["b", "c"]));
      await subject.settle?.();
      expect(await bodies(repo)).toEqual(["c", "b", "a"]);
      expect(await bodies(repo, 2)).toEqual(["c", "b"]);
      await repo.append(meta, textBatch(meta, ["d"]));
      expect(await bodies(other)).toEqual(["d", "c", "b", "a"]);
      expect(await bodies(repo)).toEqual(["d", "c", "b", "a"]);
      const { tip } = await other.branch(meta);
      const summary = textEntry("summary", "");
      expect(await other.replace(meta, { gen: meta.gen, base: true, count: 1, at: Date.now(), entries: [summary] }, tip)).not.toBe(false);
      await subject.settle?.();
      expect(await bodies(repo)).toEqual(["summary"]);
      await repo.append(meta, textBatch(meta, ["e"]));
      expect(await bodies(other)).toEqual(["e", "summary"]);
      await repo.replace(meta, { gen: meta.gen, base: true, count: 0, at: Date.now(), entries: [] });
      expect(await bodies(other)).toEqual([]);
      expect((await other.preview(meta.key, 5))?.entries).toEqual([]);
      await other.append(meta, textBatch(meta, ["f"]));
      await subject.settle?.();
      expect(await bodies(repo)).toEqual(["f"]);
      expect(await other.delete(meta.key)).toBe(true);
      await subject.settle?.();
      expect(await repo.preview(meta.key, 5)).toBeNull();
      const again = await created(meta.key);
      expect((await repo.preview(meta.key, 5))?.entries).toEqual([]);
      await other.append(again, textBatch(again, ["g"]));
      await subject.settle?.();
      expect((await repo.preview(meta.key, 5))?.entries.map((e) => e.body)).toEqual(["g"]);
      expect((await other.preview(meta.key, 5))?.entries.map((e) => e.body)).toEqual(["g"]);
    });

    it("reads tails longer than the marks cover, and every tail limit of a long history", async () => {
      const meta = await created();
      const bodies = Array.from({ length: 460 }, (_, i) => `m${i}`);
      for (let i = 0; i < 420; i++) await repo.append(meta, textBatch(meta, [bodies[i]!]));
      await repo.append(meta, textBatch(meta, bodies.slice(420)));
      const newestFirst = [...bodies].reverse();
      for (const limit of [460, 455, 400, 399, 41, 40, 39, 1]) {
        const fresh = await subject.reopen();
        expect((await fresh.tail(meta, limit)).map((e) => e.body)).toEqual(newestFirst.slice(0, limit));
        repo = fresh;
      }
    });

    it("answers each tail limit exactly however the previous reads were cut", async () => {
      const meta = await created();
      const bodies = Array.from({ length: 30 }, (_, i) => `m${i}`);
      for (let i = 0; i < bodies.length; i += 3) await repo.append(meta, textBatch(meta, bodies.slice(i, i + 3)));
      const newestFirst = [...bodies].reverse();
      for (const limit of [2, 5, 1, 30, 200, 7, 29, 31]) {
        expect((await repo.tail(meta, limit)).map((e) => e.body)).toEqual(newestFirst.slice(0, limit));
      }
      await repo.append(meta, textBatch(meta, ["late"]));
      expect((await repo.tail(meta, 3)).map((e) => e.body)).toEqual(["late", ...newestFirst.slice(0, 2)]);
      expect((await repo.tail(meta, 200)).map((e) => e.body)).toEqual(["late", ...newestFirst]);
    });

    it("stores awkward keys and keeps everything across a restart", async () => {
      const metas = [];
      for (const key of AWKWARD_KEYS) {
        const meta = await created(`${key}${randomUUID().slice(0, 4)}`);
        await repo.append(meta, textBatch(meta, [`hello ${key}`, "second"]));
        metas.push(meta);
      }
      repo = await subject.reopen();
      for (const meta of metas) {
        expect((await repo.getMeta(meta.key))?.messageCount).toBe(2);
        expectChain((await repo.branch(meta)).entries, [`hello ${meta.key.slice(0, -4)}`, "second"]);
      }
      const listed = (await listAll(repo)).map((m) => m.key);
      expect(listed).toEqual(expect.arrayContaining(metas.map((m) => m.key)));
    });
  });
}
