import { appendFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileSessionRepository } from "./file-repository.js";
import { baseNameForKey } from "./file-names.js";
import { describeRepositoryContract } from "../repository.contract.js";
import { expectChain, newMeta, textBatch } from "../contract-helpers.js";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gw-sessions-"));
  dirs.push(dir);
  return dir;
}

/** The files in `dir` named after `key`: its `.meta`, its `.<id>.log`s and any temp file of theirs. */
const filesOf = (dir: string) => async (key: string) =>
  (await readdir(dir)).filter((name) => name.includes(`${baseNameForKey(key)}.`)).sort();

describeRepositoryContract("files", async () => {
  const dir = await freshDir();
  let repo = await FileSessionRepository.open(dir);
  return {
    get repo() {
      return repo;
    },
    async reopen() {
      await repo.close();
      repo = await FileSessionRepository.open(dir);
      return repo;
    },
    leftovers: filesOf(dir),
    dispose: () => repo.close(),
  };
});

describeRepositoryContract("files, tiny tail cache", async () => {
  // Two sessions of three entries: every test runs through evictions and cut tails.
  const cache = { sessions: 2, entries: 3, bytes: 1e6 };
  const dir = await freshDir();
  let repo = await FileSessionRepository.open(dir, { cache });
  return {
    get repo() {
      return repo;
    },
    async reopen() {
      await repo.close();
      repo = await FileSessionRepository.open(dir, { cache });
      return repo;
    },
    leftovers: filesOf(dir),
    dispose: () => repo.close(),
  };
});

describe("file session store tail cache", () => {
  it("previews an unchanged session from memory and follows every write path", async () => {
    const dir = await freshDir();
    const repo = await FileSessionRepository.open(dir);
    const meta = (await repo.createMeta(newMeta("cache:one"))).meta;
    await repo.append(meta, textBatch(meta, ["a", "b"]));
    expect((await repo.tail(meta, 5)).map((e) => e.body)).toEqual(["b", "a"]);
    // The log is gone behind the store's back: only a cached tail can still answer.
    const log = (await readdir(dir)).find((n) => n.endsWith(".log"))!;
    const bytes = await readFile(join(dir, log));
    await rm(join(dir, log));
    expect((await repo.preview(meta.key, 5))?.entries.map((e) => e.body)).toEqual(["b", "a"]);
    await writeFile(join(dir, log), bytes);
    await repo.append(meta, textBatch(meta, ["c"]));
    expect((await repo.tail(meta, 5)).map((e) => e.body)).toEqual(["c", "b", "a"]);
    const { tip } = await repo.branch(meta);
    const summary = { ...(await repo.tail(meta, 1))[0]!, id: "s", body: "summary" };
    await repo.replace(meta, { gen: meta.gen, base: true, count: 1, at: Date.now(), entries: [summary] }, tip);
    expect((await repo.tail(meta, 5)).map((e) => e.body)).toEqual(["summary"]);
    await repo.replace(meta, { gen: meta.gen, base: true, count: 0, at: Date.now(), entries: [] });
    expect(await repo.tail(meta, 5)).toEqual([]);
    await repo.delete(meta.key);
    await expect(repo.tail(meta, 5)).rejects.toMatchObject({ code: "NOT_FOUND" });
    const again = (await repo.createMeta(newMeta("cache:one"))).meta;
    expect(await repo.tail(again, 5)).toEqual([]);
    await repo.append(again, textBatch(again, ["new"]));
    expect((await repo.preview(again.key, 5))?.entries.map((e) => e.body)).toEqual(["new"]);
    await repo.close();
  });
});

// A crash is a store left without `close`: no snapshot, so the next start reads every file.
describe("file session store after a crash", () => {
  async function withHistory(bodies: string[]) {
    const dir = await freshDir();
    const repo = await FileSessionRepository.open(dir);
    const meta = (await repo.createMeta(newMeta("crash:one"))).meta;
    for (const body of bodies) await repo.append(meta, textBatch(meta, [body]));
    const log = (await readdir(dir)).find((n) => n.endsWith(".log"))!;
    return { dir, meta, log: join(dir, log) };
  }

  it.each([
    ["a torn record", Buffer.from([0, 0, 0, 90, 1, 2, 3, 4, 123, 34])],
    ["zeros the disk never filled", Buffer.alloc(64)],
    ["garbage", Buffer.from("not a record at all, just bytes")],
  ])("ignores and cuts %s at the tail", async (_name, junk) => {
    const { dir, meta, log } = await withHistory(["a", "b", "c"]);
    const intact = (await stat(log)).size;
    await appendFile(log, junk);
    const repo = await FileSessionRepository.open(dir);
    expect((await stat(log)).size).toBe(intact);
    expect((await repo.getMeta(meta.key))?.messageCount).toBe(3);
    await repo.append(meta, textBatch(meta, ["d"]));
    expectChain((await repo.branch(meta)).entries, ["a", "b", "c", "d"]);
    expect((await repo.tail(meta, 2)).map((e) => e.body)).toEqual(["d", "c"]);
  });

  it("drops temp files and logs no metadata names (a swap cut short)", async () => {
    const { dir, meta } = await withHistory(["a"]);
    await writeFile(join(dir, ".half-written.meta.abc.tmp"), "{");
    await writeFile(join(dir, "orphan.0123456789ab.log"), "x");
    const repo = await FileSessionRepository.open(dir);
    const names = await readdir(dir);
    expect(names.some((n) => n.endsWith(".tmp") || n.startsWith("orphan"))).toBe(false);
    expectChain((await repo.branch(meta)).entries, ["a"]);
  });

  it("skips a metadata file that does not decode, says which, and keeps every log", async () => {
    const { dir, meta, log } = await withHistory(["a"]);
    const other = (await readdir(dir)).find((n) => n.endsWith(".meta"))!;
    const good = await FileSessionRepository.open(dir);
    const second = (await good.createMeta(newMeta("crash:two"))).meta;
    await good.append(second, textBatch(second, ["b"]));
    await writeFile(join(dir, other), JSON.stringify({ meta: { key: meta.key }, log: "x", checkpoint: 0 }));
    const corrupt: string[] = [];
    const repo = await FileSessionRepository.open(dir, { onCorruptMeta: (file) => corrupt.push(file) });
    expect(corrupt).toEqual([other]);
    expect(await repo.getMeta(meta.key)).toBeNull();
    expectChain((await repo.branch(second)).entries, ["b"]);
    expect(await stat(log)).toBeDefined();
    await repo.close();
  });
});

describe("file session log read backwards", () => {
  it("walks records across window boundaries, small and larger than a window", async () => {
    const dir = await freshDir();
    const repo = await FileSessionRepository.open(dir);
    const meta = (await repo.createMeta(newMeta("big:one"))).meta;
    const bodies = Array.from({ length: 60 }, (_, i) => (i % 7 === 3 ? `${i}`.padEnd(100_000, "x") : `m${i}-${"y".repeat(i * 300)}`));
    for (const b of bodies) await repo.append(meta, textBatch(meta, [b]));
    expect((await repo.tail(meta, 200)).map((e) => e.body)).toEqual([...bodies].reverse());
    expect((await repo.tail(meta, 5)).map((e) => e.body)).toEqual(bodies.slice(-5).reverse());
    await repo.close();
  });
});
