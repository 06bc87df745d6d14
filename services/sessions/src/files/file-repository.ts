import { rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { GatewayError } from "@gw/contracts";
import { fsyncDir, KeyedMutex, writeFileAtomic } from "@gw/store";
import { encodeBatch } from "../storage/batch-codec.js";
import { frameRecord } from "./file-log.js";
import { baseNameForKey, META_SUFFIX, newLogName } from "./file-names.js";
import type { CorruptMetaFile, MetaFile, Slot } from "./file-slots.js";
import { loadStore, type StoreLoad, writeImported } from "./file-load.js";
import { writeSnapshot } from "./file-snapshot.js";
import { WriteTracker } from "./write-tracker.js";
import { appendRecord, readBranch, readTail, writeNewLog } from "./session-log.js";
import { withHistory } from "../storage/meta-update.js";
import { type Batch, EMPTY_TIP, type SessionMeta, type StoredEntry, sameTip, type Tip, tipOf } from "../model.js";
import { FileListIndex } from "./file-list-index.js";
import type { PageQuery, SessionPage } from "../list-index/session-index.js";
import type { NewSession, SessionRepository } from "../repository.js";
import { TailCache, type TailCacheLimits } from "../storage/tail-cache.js";

export type { StoreLoad } from "./file-load.js";

/** Rewriting the metadata on every append would triple the fsyncs; the log's tail is the truth. */
const CHECKPOINT_EVERY = 256;

const gone = (key: string) => new GatewayError("NOT_FOUND", `unknown session: ${key}`);

/**
 * Embedded mode: `<dir>/<name>.meta` (atomic rename) and `<dir>/<name>.<id>.log` (append-only,
 * fdatasync per append). One process owns the directory; a per-key mutex orders its writes.
 * A clean close leaves a snapshot of every session for the next start (file-snapshot.ts).
 */
export class FileSessionRepository implements SessionRepository {
  private readonly slots = new Map<string, Slot>();
  private readonly locks = new KeyedMutex();
  /** The list index (file-list-index.ts). */
  private readonly index = new FileListIndex();
  /** Writes under way: `close` waits for them, and writes no snapshot if one may have left stray files. */
  private readonly writes = new WriteTracker();
  /** Set by `close`: from then on the store refuses new work. */
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly dir: string,
    private readonly tails: TailCache,
  ) {}

  /**
   * `cache` bounds the in-memory tails that let previews skip the disk (tests make it small);
   * `onCorruptMeta` hears of a metadata file that does not decode (that session is not loaded);
   * `onLoaded` hears whether the sessions came from a clean close's snapshot or from every file.
   */
  static async open(
    dir: string,
    opts: { cache?: TailCacheLimits; onCorruptMeta?: CorruptMetaFile; onLoaded?: (load: StoreLoad) => void } = {},
  ): Promise<FileSessionRepository> {
    const { slots, load } = await loadStore(dir, opts.onCorruptMeta);
    opts.onLoaded?.(load);
    const repo = new FileSessionRepository(dir, new TailCache(opts.cache));
    for (const slot of slots) repo.slots.set(slot.meta.key, slot);
    repo.index.fill(slots, (slot) => repo.slots.get(slot.meta.key) === slot);
    return repo;
  }

  async getMeta(key: string): Promise<SessionMeta | null> {
    return this.metaOf(key);
  }

  private metaOf(key: string): SessionMeta | null {
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
      const slot: Slot = { meta, log, checkpoint: 0, base, size: 0, tip: EMPTY_TIP, sinceCheckpoint: 0, version: 0 };
      await this.writeMeta(slot);
      this.slots.set(meta.key, slot);
      this.index.put(slot);
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
      this.index.put(slot);
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
  createMany(sessions: NewSession[]): Promise<number> {
    return this.tracked(() => this.createAll(sessions));
  }

  private async createAll(sessions: NewSession[]): Promise<number> {
    let next = 0;
    let created = 0;
    const one = async (session: NewSession) => {
      if (this.slots.has(session.meta.key)) return;
      const slot = await writeImported(this.dir, session);
      this.slots.set(session.meta.key, slot);
      this.index.put(slot);
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
      const batch = build(slot.tip);
      const frame = frameRecord(encodeBatch(batch));
      await appendRecord(join(this.dir, slot.log), frame, slot.size);
      if (slot.size === 0) await fsyncDir(this.dir);
      slot.size += frame.length;
      slot.tip = tipOf(batch, slot.meta.gen);
      this.advance(slot, batch);
      slot.meta = withHistory(slot.meta, slot.tip, batch.at);
      this.index.put(slot);
      if (++slot.sinceCheckpoint >= CHECKPOINT_EVERY) await this.writeMeta(slot);
      return { batch, meta: { ...slot.meta } };
    });
  }

  replace(meta: SessionMeta, batch: Batch, expected?: Tip): Promise<{ meta: SessionMeta } | false> {
    return this.locked(meta.key, async () => {
      const slot = this.live(meta);
      if (expected && !sameTip(slot.tip, expected)) return false;
      const oldLog = slot.log;
      const log = newLogName(slot.base);
      const frame = frameRecord(encodeBatch(batch));
      await writeNewLog(join(this.dir, log), frame);
      Object.assign(slot, { log, size: frame.length, tip: tipOf(batch, slot.meta.gen) });
      slot.meta = withHistory(slot.meta, slot.tip, batch.at);
      // The metadata file names the live log: renaming it in is the commit point of the swap.
      await this.writeMeta(slot);
      this.index.put(slot);
      // Only now may lock-free previews see the new history (see `tail`).
      this.advance(slot, batch);
      await rm(join(this.dir, oldLog), { force: true });
      return { meta: { ...slot.meta } };
    });
  }

  tail(meta: SessionMeta, limit: number): Promise<StoredEntry[]> {
    // Cached tails change only together with the slot, in the same tick as a write completes, so
    // a hit needs no lock: it sees the history as of the last completed write.
    const slot = this.closing ? undefined : this.slots.get(meta.key);
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

  /** The hot read: not `async`, so a cached tail costs two promises rather than five. */
  preview(key: string, limit: number): Promise<{ meta: SessionMeta; entries: StoredEntry[] } | null> {
    try {
      const meta = this.metaOf(key);
      return meta === null ? Promise.resolve(null) : this.tail(meta, limit).then((entries) => ({ meta, entries }));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  branch(meta: SessionMeta): Promise<{ entries: StoredEntry[]; tip: Tip }> {
    return this.locked(meta.key, async () => {
      const slot = this.live(meta);
      const entries = await readBranch(join(this.dir, slot.log), slot.size, slot.meta.gen);
      return { entries, tip: slot.tip };
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
      await this.index.remove(key);
      this.tails.forget(key);
      await rm(join(this.dir, slot.log), { force: true });
      return true;
    });
  }

  isHealthy(): boolean {
    return this.closing === undefined;
  }

  /**
   * Refuses new work, lets what was accepted finish, then writes the snapshot of every session
   * for the next start (unless a write failed: then the next start recovers from the files).
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    await this.writes.settled();
    if (!this.writes.unsure) await writeSnapshot(this.dir, [...this.slots.values()]);
  }

  private live(meta: SessionMeta): Slot {
    const slot = this.slots.get(meta.key);
    if (!slot || slot.meta.gen !== meta.gen) throw gone(meta.key);
    return slot;
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
    if (this.closing) throw new GatewayError("UNAVAILABLE", "the session store is closed");
  }

  private locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    return this.tracked(() => this.locks.run(key, work));
  }

  /** Starts `work` if the store is open, counted as under way until it settles. */
  private tracked<T>(work: () => Promise<T>): Promise<T> {
    try {
      this.assertOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.writes.track(work());
  }
}
