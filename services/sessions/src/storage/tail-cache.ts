import type { Batch, StoredEntry } from "../model.js";

/**
 * The newest entries of one session's current branch as of one version of its history.
 * `version` names that history exactly: the stream sequence of the newest batch (JetStream;
 * sequences are never reused and a message never changes), or a per-process write counter (files).
 */
interface CachedTail {
  gen: string;
  version: number;
  /** Oldest first. */
  entries: StoredEntry[];
  /** The whole branch (it starts at a base or at the first batch), not just its newest part. */
  complete: boolean;
  bytes: number;
}

export interface TailCacheLimits {
  /** Sessions kept (least recently used goes first). */
  sessions: number;
  /** Entries kept per session; a longer branch keeps its newest ones. */
  entries: number;
  /** Approximate bytes (entry bodies and metadata) over all sessions. */
  bytes: number;
}

/**
 * Enough for every `sessions.preview` limit (at most 200) and the runner's default history limit
 * (400), so the owner of an active session answers both from memory.
 */
export const DEFAULT_TAIL_CACHE: TailCacheLimits = { sessions: 1024, entries: 400, bytes: 32 * 2 ** 20 };

const FIXED_COST = 160;
const sizeOf = (e: StoredEntry) =>
  FIXED_COST + 2 * (e.body.length + e.sender.length + e.meta.length + e.id.length + e.parentId.length);

/**
 * A bounded LRU of session tails, so a preview of an unchanged session costs no disk read and no
 * decoding. It never decides on its own that a tail is current: every read names the version the
 * caller just saw in storage, and only a tail cached for exactly that version answers. Writes by
 * this process move a cached tail forward (or drop it); writes by other processes simply make the
 * next read miss.
 */
export class TailCache {
  private readonly tails = new Map<string, CachedTail>();
  private bytes = 0;

  constructor(private readonly limits: TailCacheLimits = DEFAULT_TAIL_CACHE) {}

  /** The newest `limit` entries, newest first, or undefined when the cache cannot answer exactly. */
  read(key: string, gen: string, version: number, limit: number): StoredEntry[] | undefined {
    const tail = this.tails.get(key);
    if (!tail || tail.gen !== gen || tail.version !== version) return undefined;
    if (!tail.complete && tail.entries.length < limit) return undefined;
    this.tails.delete(key);
    this.tails.set(key, tail);
    const out: StoredEntry[] = [];
    for (let i = tail.entries.length - 1; i >= 0 && out.length < limit; i--) out.push(tail.entries[i]!);
    return out;
  }

  /** Keeps what a read from storage found: `newestFirst` is the branch's tail at `version`. */
  fill(key: string, gen: string, version: number, newestFirst: StoredEntry[], complete: boolean): void {
    this.put(key, { gen, version, entries: [...newestFirst].reverse(), complete, bytes: 0 });
  }

  /**
   * This process wrote `batch` on top of the history at `previous`, making it `version`. A cached
   * tail of `previous` moves forward; any other is dropped. Uncached sessions stay uncached.
   */
  written(key: string, previous: number, version: number, batch: Batch): void {
    const tail = this.tails.get(key);
    if (!tail) return;
    if (batch.base) {
      this.put(key, { gen: batch.gen, version, entries: [...batch.entries], complete: true, bytes: 0 });
    } else if (tail.gen === batch.gen && tail.version === previous) {
      const entries = tail.entries.concat(batch.entries);
      this.put(key, { gen: batch.gen, version, entries, complete: tail.complete, bytes: 0 });
    } else {
      this.forget(key);
    }
  }

  forget(key: string): void {
    const tail = this.tails.get(key);
    if (!tail) return;
    this.tails.delete(key);
    this.bytes -= tail.bytes;
  }

  get size(): { sessions: number; bytes: number } {
    return { sessions: this.tails.size, bytes: this.bytes };
  }

  private put(key: string, tail: CachedTail): void {
    this.forget(key);
    if (tail.entries.length > this.limits.entries) {
      tail.entries = tail.entries.slice(-this.limits.entries);
      tail.complete = false;
    }
    tail.bytes = tail.entries.reduce((sum, e) => sum + sizeOf(e), 0);
    // One huge session must not push every other one out.
    if (tail.bytes > this.limits.bytes / 4) return;
    this.tails.set(key, tail);
    this.bytes += tail.bytes;
    for (const [oldest, old] of this.tails) {
      if (this.tails.size <= this.limits.sessions && this.bytes <= this.limits.bytes) break;
      this.tails.delete(oldest);
      this.bytes -= old.bytes;
    }
  }
}
