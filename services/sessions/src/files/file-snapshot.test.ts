import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileSessionRepository, type StoreLoad } from "./file-repository.js";
import { SNAPSHOT_NAME } from "./file-snapshot.js";
import { expectChain, newMeta, textBatch } from "../contract-helpers.js";
import type { SessionMeta } from "../model.js";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gw-sessions-snapshot-"));
  dirs.push(dir);
  return dir;
}

async function open(dir: string): Promise<{ repo: FileSessionRepository; load: StoreLoad }> {
  let load: StoreLoad | undefined;
  const repo = await FileSessionRepository.open(dir, { onLoaded: (l) => (load = l) });
  return { repo, load: load! };
}

/** Everything a client can see of the store: every page of both lists, each session's metadata, preview and branch. */
async function visible(repo: FileSessionRepository) {
  const all = await repo.listPage({ agentId: "", offset: 0, limit: 1000 });
  const ops = await repo.listPage({ agentId: "ops", offset: 0, limit: 1000 });
  const sessions = await Promise.all(
    all.sessions.map(async (meta) => ({
      meta: await repo.getMeta(meta.key),
      preview: (await repo.preview(meta.key, 3))?.entries.map((e) => e.body),
      branch: await repo.branch(meta),
    })),
  );
  return { all, ops, sessions };
}

/** Sessions in every state a slot can be in: empty, appended to, compacted, reset, moved to another agent, deleted. */
async function populate(repo: FileSessionRepository): Promise<SessionMeta[]> {
  const metas: SessionMeta[] = [];
  for (let i = 0; i < 6; i++) metas.push((await repo.createMeta(newMeta(`snap:${i}`, Date.now() + i))).meta);
  for (const [i, meta] of metas.entries()) {
    for (let turn = 0; turn < i; turn++) await repo.append(meta, textBatch(meta, [`${i}.${turn}a`, `${i}.${turn}b`]));
  }
  const { tip } = await repo.branch(metas[3]!);
  const summary = { ...(await repo.tail(metas[3]!, 1))[0]!, id: "summary-3", parentId: "", body: "summary" };
  await repo.replace(metas[3]!, { gen: metas[3]!.gen, base: true, count: 1, at: Date.now(), entries: [summary] }, tip);
  await repo.replace(metas[4]!, { gen: metas[4]!.gen, base: true, count: 0, at: Date.now(), entries: [] });
  await repo.updateMeta(metas[5]!.key, (m) => ({ ...m, agentId: "ops", thinking: "high" }));
  await repo.delete(metas[1]!.key);
  await repo.createMany([{ meta: newMeta("snap:bulk"), entries: [] }]);
  return metas;
}

describe("file session store snapshot of a clean close", () => {
  it("starts from the snapshot and shows what the files show, then keeps writing", async () => {
    const dir = await freshDir();
    const first = await open(dir);
    expect(first.load).toMatchObject({ from: "files", sessions: 0 });
    const metas = await populate(first.repo);
    const before = await visible(first.repo);
    await first.repo.close();
    expect(await readdir(dir)).toContain(SNAPSHOT_NAME);

    const again = await open(dir);
    expect(again.load).toEqual({ from: "snapshot", sessions: 6 });
    expect(await visible(again.repo)).toEqual(before);
    // Consumed as it was read: a crash from here on must not find it.
    expect(await readdir(dir)).not.toContain(SNAPSHOT_NAME);
    const meta = metas[2]!;
    await again.repo.append(meta, textBatch(meta, ["after"]));
    expectChain((await again.repo.branch(meta)).entries, ["2.0a", "2.0b", "2.1a", "2.1b", "after"]);
    const { tip } = await again.repo.branch(metas[3]!);
    expect(await again.repo.replace(metas[3]!, { gen: metas[3]!.gen, base: true, count: 0, at: Date.now(), entries: [] }, tip)).not.toBe(false);
    const after = await visible(again.repo);
    await again.repo.close();

    // The same store read from its files (no snapshot) matches the one read from the snapshot.
    await rm(join(dir, SNAPSHOT_NAME));
    const scanned = await open(dir);
    expect(scanned.load.from).toBe("files");
    expect(await visible(scanned.repo)).toEqual(after);
    await scanned.repo.close();
  });

  it("reads every file after a crash, and loses nothing written after a start from the snapshot", async () => {
    const dir = await freshDir();
    const first = await open(dir);
    const metas = await populate(first.repo);
    await first.repo.close();

    const started = await open(dir);
    expect(started.load.from).toBe("snapshot");
    const meta = metas[5]!;
    await started.repo.append(meta, textBatch(meta, ["x", "y"]));
    await started.repo.createMeta(newMeta("snap:new"));
    await started.repo.delete(metas[0]!.key);
    const before = await visible(started.repo);
    // Crash: no close.

    const recovered = await open(dir);
    expect(recovered.load).toMatchObject({ from: "files", sessions: 6, why: expect.stringContaining("no snapshot") });
    expect(await visible(recovered.repo)).toEqual(before);
    expectChain((await recovered.repo.branch(meta)).entries, ["5.0a", "5.0b", "5.1a", "5.1b", "5.2a", "5.2b", "5.3a", "5.3b", "5.4a", "5.4b", "x", "y"]);
    await recovered.repo.close();
  });

  it.each([
    ["a flipped byte", (b: Buffer) => Buffer.concat([b.subarray(0, b.length - 20), Buffer.from([b[b.length - 20]! ^ 1]), b.subarray(b.length - 19)])],
    ["a torn end", (b: Buffer) => b.subarray(0, b.length - 30)],
    ["no header", (b: Buffer) => b.subarray(b.indexOf(0x0a) + 1)],
    ["another format", (b: Buffer) => Buffer.from(b.toString("utf8").replace("gw-sessions-snapshot/1", "gw-sessions-snapshot/9"))],
    ["an empty file", () => Buffer.alloc(0)],
  ])("falls back to every file for a snapshot with %s", async (_name, spoil) => {
    const dir = await freshDir();
    const first = await open(dir);
    await populate(first.repo);
    const before = await visible(first.repo);
    await first.repo.close();
    const path = join(dir, SNAPSHOT_NAME);
    await writeFile(path, spoil(await readFile(path)));

    const again = await open(dir);
    expect(again.load).toMatchObject({ from: "files", sessions: 6, why: expect.stringContaining("snapshot unusable") });
    expect(await visible(again.repo)).toEqual(before);
    expect(await readdir(dir)).not.toContain(SNAPSHOT_NAME);
    await again.repo.close();
  });

  it("reads lines longer than its read buffer (long keys)", async () => {
    const dir = await freshDir();
    const { repo } = await open(dir);
    const keys = Array.from({ length: 600 }, (_, i) => `long:${i}:${"x".repeat(400)}`);
    await repo.createMany(keys.map((key) => ({ meta: newMeta(key), entries: [] })));
    const before = await repo.listPage({ agentId: "", offset: 0, limit: 1000 });
    await repo.close();

    const again = await open(dir);
    expect(again.load).toEqual({ from: "snapshot", sessions: 600 });
    expect(await again.repo.listPage({ agentId: "", offset: 0, limit: 1000 })).toEqual(before);
    await again.repo.close();
  });

  it("lists every session right after the start, while the index fills and writes go on", async () => {
    const dir = await freshDir();
    const first = await open(dir);
    const now = Date.now();
    // Three chunks of the index fill; the oldest sessions go in last.
    await first.repo.createMany(Array.from({ length: 9_000 }, (_, i) => ({ meta: newMeta(`fill:${i}`, now - i), entries: [] })));
    await first.repo.close();

    const { repo } = await open(dir);
    const oldest = (await repo.getMeta("fill:8999"))!;
    const [deleted, page] = await Promise.all([
      repo.delete("fill:8998"),
      repo.listPage({ agentId: "", offset: 8_990, limit: 20 }),
      repo.append(oldest, textBatch(oldest, ["moved up"])),
    ]);
    expect(deleted).toBe(true);
    const after = await repo.listPage({ agentId: "", offset: 0, limit: 1 });
    expect(after.total).toBe(8_999);
    expect(after.sessions[0]).toMatchObject({ key: "fill:8999", messageCount: 1 });
    expect(page.total).toBeGreaterThanOrEqual(8_999);
    expect((await repo.listPage({ agentId: "", offset: 8_990, limit: 20 })).sessions.map((m) => m.key)).not.toContain("fill:8998");
    await repo.close();
  });

  it("writes no snapshot when a write failed, so the next start recovers from the files", async () => {
    const dir = await freshDir();
    const { repo } = await open(dir);
    const meta = (await repo.createMeta(newMeta("snap:failing"))).meta;
    await repo.append(meta, textBatch(meta, ["a"]));
    // The live log cannot be opened for the next append: a directory stands in its place.
    const log = (await readdir(dir)).find((n) => n.endsWith(".log"))!;
    await rm(join(dir, log));
    await mkdir(join(dir, log));
    await expect(repo.append(meta, textBatch(meta, ["b"]))).rejects.toThrow();
    await repo.close();
    expect(await readdir(dir)).not.toContain(SNAPSHOT_NAME);
  });

  it("closes after the writes already accepted, and the snapshot holds them", async () => {
    const dir = await freshDir();
    const { repo } = await open(dir);
    const meta = (await repo.createMeta(newMeta("snap:late"))).meta;
    const appends = Array.from({ length: 5 }, (_, i) => repo.append(meta, textBatch(meta, [`m${i}`])));
    const closed = repo.close();
    await expect(repo.append(meta, textBatch(meta, ["refused"]))).rejects.toMatchObject({ code: "UNAVAILABLE" });
    await Promise.all(appends);
    await closed;

    const again = await open(dir);
    expect(again.load.from).toBe("snapshot");
    expectChain((await again.repo.branch(meta)).entries, ["m0", "m1", "m2", "m3", "m4"]);
    expect((await again.repo.getMeta(meta.key))?.messageCount).toBe(5);
    await again.repo.close();
  });
});
