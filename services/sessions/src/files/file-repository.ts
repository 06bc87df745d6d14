import { mkdir, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { GatewayError } from "@gw/contracts";
import { fsyncDir, KeyedMutex, writeFileAtomic } from "@gw/store";
import { encodeBatch } from "../storage/batch-codec.js";
import { frameRecord } from "./file-log.js";
import { baseNameForKey, META_SUFFIX, newLogName } from "./file-names.js";
import { type CorruptMetaFile, loadSlots, type MetaFile, type Slot } from "./file-slots.js";
import { appendRecord, readBranch, readTail, writeNewLog } from "./session-log.js";
import { withHistory } from "../storage/meta-update.js";
import { type Batch, type SessionMeta, type StoredEntry, sameTip, type Tip, tipOf } from "../model.js";
import { MemorySessionIndex } from "../list-index/memory-session-index.js";
import type { PageQuery, SessionPage } from "../list-index/session-index.js";
import type { NewSession, SessionRepository } from "../repository.js";
import { TailCache, type TailCacheLimits } from "../storage/tail-cache.js";

/** Rewriting the metadata on every append would triple the fsyncs; the log's tail is the truth. */
const CHECKPOINT_EVERY = 256;

const gone = (key: string) => new GatewayError("NOT_FOUND", `unknown session: ${key}`);

/**
 * Embedded mode: `<dir>/<name>.meta` (atomic rename) and `<dir>/<name>.<id>.log` (append-only,
 * fdatasync per append). One process owns the directory; a per-key mutex orders its writes.
 */
export class FileSessionRepository implements SessionRepository {
  private readonly slots = new Map<string, Slot>();
  private readonly locks = new KeyedMutex();
  private readonly tails: TailCache;
  /** The list index; every metadata change goes in with the next value of `indexVersion`. */
  private readonly index = new MemorySessionIndex();
  private indexVersion = 0;
  private closed = false;

  private constructor(
    private readonly dir: string,
    cache?: TailCacheLimits,
  ) {
    this.tails = new TailCache(cache);
  }

  /**
   * `cache` bounds the in-memory tails that let previews skip the disk (tests make it small);
   * `onCorruptMeta` hears of a metadata file that does not decode (that session is not loaded).
   */
  static async open(dir: string, opts: { cache?: TailCacheLimits; onCorruptMeta?: CorruptMetaFile } = {}): Promise<FileSessionRepository> {
    await mkdir(dir, { recursive: true });
    const repo = new FileSessionRepository(dir, opts.cache);
    await loadSlots(dir, (slot) => {
      repo.slots.set(slot.meta.key, slot);
      repo.index.putNow(slot.meta, ++repo.indexVersion);
    }, opts.onCorruptMeta);
    return repo;
  }

  async getMeta(key: string): Promise<SessionMeta | null> {
    this.assertOpen();
    const slot = this.slots.get(key);
    return slot ? { ...slot.meta } : null;
  }

  createMeta(meta: SessionMeta): Promise<{ meta: SessionMeta; created: boolean }> {
    return this.locked(meta.key, async () => {
      const existing = this.slots.get(meta.key);
      if (existing) return { meta: { ...existing.meta }, created: false };
      const base = baseNameForKey(meta.key);
      const log = newLogName(base);
      const slot: Slot = { meta, log, checkpoint: 0, base, size: 0, last: undefined, sinceCheckpoint: 0, version: 0 };
      await this.writeMeta(slot);
      this.slots.set(meta.key, slot);
      this.indexed(slot);
      return { meta: { ...meta }, created: true };
    });
  }

  updateMeta(key: string, mutate: (current: SessionMeta) => SessionMeta | undefined) {
    return this.locked(key, async () => {
      const slot = this.slots.get(key);
      if (!slot) return null;
      const before = { ...slot.meta };
      const next = mutate({ ...before });
      if (next === undefined) return { before, after: before };
      slot.meta = { ...next };
      await this.writeMeta(slot);
      this.indexed(slot);
      return { before, after: { ...next } };
    });
  }

  async listPage(query: PageQuery): Promise<SessionPage> {
    this.assertOpen();
    return this.index.page(query);
  }

  /**
   * Writes each new session's log and metadata file, 32 sessions at a time, without an fsync per
   * file (10,000 fsyncs take a minute here): the import is synced by one fsync of the directory
   * at the end, so what a crash right after it keeps is up to the file system's own flushing.
   */
  async createMany(sessions: NewSession[]): Promise<number> {
    this.assertOpen();
    let next = 0;
    let created = 0;
    const one = async ({ meta, entries }: NewSession) => {
      if (this.slots.has(meta.key)) return;
      const base = baseNameForKey(meta.key);
      const log = newLogName(base);
      const batch: Batch = { gen: meta.gen, base: true, count: entries.length, at: meta.updatedAt, entries };
      const frame = entries.length > 0 ? frameRecord(encodeBatch(batch)) : Buffer.alloc(0);
      if (frame.length > 0) await writeFile(join(this.dir, log), frame, { mode: 0o600 });
      const slot: Slot = {
        meta: withHistory(meta, tipOf(frame.length > 0 ? batch : undefined, meta.gen), meta.updatedAt),
        log,
        checkpoint: frame.length,
        base,
        size: frame.length,
        last: frame.length > 0 ? batch : undefined,
        sinceCheckpoint: 0,
        version: 0,
      };
      const file: MetaFile = { meta: slot.meta, log, checkpoint: slot.size };
      await writeFile(join(this.dir, `${base}${META_SUFFIX}`), JSON.stringify(file), { mode: 0o600, flag: "wx" });
      this.slots.set(meta.key, slot);
      this.indexed(slot);
      created++;
    };
    await Promise.all(
      Array.from({ length: Math.min(32, sessions.length) }, async () => {
        while (next < sessions.length) {
          const session = sessions[next++]!;
          await this.locks.run(session.meta.key, () => one(session));
        }
      }),
    );
    await fsyncDir(this.dir);
    return created;
  }

  append(meta: SessionMeta, build: (tip: Tip) => Batch): Promise<{ batch: Batch; meta: SessionMeta }> {
    return this.locked(meta.key, async () => {
      const slot = this.live(meta);
      const batch = build(tipOf(slot.last, slot.meta.gen));
      const frame = frameRecord(encodeBatch(batch));
      await appendRecord(join(this.dir, slot.log), frame, slot.size);
      if (slot.size === 0) await fsyncDir(this.dir);
      slot.size += frame.length;
      slot.last = batch;
      this.advance(slot, batch);
      slot.meta = withHistory(slot.meta, tipOf(batch, slot.meta.gen), batch.at);
      this.indexed(slot);
      if (++slot.sinceCheckpoint >= CHECKPOINT_EVERY) await this.writeMeta(slot);
      return { batch, meta: { ...slot.meta } };
    });
  }

  replace(meta: SessionMeta, batch: Batch, expected?: Tip): Promise<{ meta: SessionMeta } | false> {
    return this.locked(meta.key, async () => {
      const slot = this.live(meta);
      if (expected && !sameTip(tipOf(slot.last, slot.meta.gen), expected)) return false;
      const oldLog = slot.log;
      const log = newLogName(slot.base);
      const frame = frameRecord(encodeBatch(batch));
      await writeNewLog(join(this.dir, log), frame);
      Object.assign(slot, { log, size: frame.length, last: batch });
      slot.meta = withHistory(slot.meta, tipOf(batch, slot.meta.gen), batch.at);
      // The metadata file names the live log: renaming it in is the commit point of the swap.
      await this.writeMeta(slot);
      this.indexed(slot);
      // Only now may lock-free previews see the new history (see `tail`).
      this.advance(slot, batch);
      await rm(join(this.dir, oldLog), { force: true });
      return { meta: { ...slot.meta } };
    });
  }

  tail(meta: SessionMeta, limit: number): Promise<StoredEntry[]> {
    // Cached tails change only together with the slot, in the same tick as a write completes, so
    // a hit needs no lock: it sees the history as of the last completed write.
    const slot = this.closed ? undefined : this.slots.get(meta.key);
    const hit = slot && slot.meta.gen === meta.gen ? this.tails.read(meta.key, meta.gen, slot.version, limit) : undefined;
    if (hit) return Promise.resolve(hit);
    return this.locked(meta.key, async () => {
      const slot = this.live(meta);
      const cached = this.tails.read(meta.key, meta.gen, slot.version, limit);
      if (cached) return cached;
      const { entries, complete } = await readTail(join(this.dir, slot.log), slot.size, slot.meta.gen, limit);
      this.tails.fill(meta.key, meta.gen, slot.version, entries, complete);
      return entries;
    });
  }

  async preview(key: string, limit: number): Promise<{ meta: SessionMeta; entries: StoredEntry[] } | null> {
    const meta = await this.getMeta(key);
    return meta && { meta, entries: await this.tail(meta, limit) };
  }

  branch(meta: SessionMeta): Promise<{ entries: StoredEntry[]; tip: Tip }> {
    return this.locked(meta.key, async () => {
      const slot = this.live(meta);
      const entries = await readBranch(join(this.dir, slot.log), slot.size, slot.meta.gen);
      return { entries, tip: tipOf(slot.last, slot.meta.gen) };
    });
  }

  delete(key: string): Promise<boolean> {
    return this.locked(key, async () => {
      const slot = this.slots.get(key);
      if (!slot) return false;
      // The metadata file goes first: without it the session no longer exists, even after a crash.
      await unlink(join(this.dir, `${slot.base}${META_SUFFIX}`));
      await fsyncDir(this.dir);
      this.slots.delete(key);
      await this.index.remove(key, ++this.indexVersion);
      this.tails.forget(key);
      await rm(join(this.dir, slot.log), { force: true });
      return true;
    });
  }

  isHealthy(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private live(meta: SessionMeta): Slot {
    const slot = this.slots.get(meta.key);
    if (!slot || slot.meta.gen !== meta.gen) throw gone(meta.key);
    return slot;
  }

  /** The slot's metadata changed: the list index follows in the same tick. */
  private indexed(slot: Slot): void {
    this.index.putNow(slot.meta, ++this.indexVersion);
  }

  /** A write to the history completed: a new version, and the cached tail moves along with it. */
  private advance(slot: Slot, batch: Batch): void {
    const previous = slot.version++;
    this.tails.written(slot.meta.key, previous, slot.version, batch);
  }

  private async writeMeta(slot: Slot): Promise<void> {
    const file: MetaFile = { meta: slot.meta, log: slot.log, checkpoint: slot.size };
    await writeFileAtomic(join(this.dir, `${slot.base}${META_SUFFIX}`), Buffer.from(JSON.stringify(file)));
    slot.checkpoint = slot.size;
    slot.sinceCheckpoint = 0;
  }

  private assertOpen(): void {
    if (this.closed) throw new GatewayError("UNAVAILABLE", "the session store is closed");
  }

  private locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    try {
      this.assertOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.locks.run(key, work);
  }
}
