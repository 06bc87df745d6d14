import type { SessionMeta } from "../model.js";

/** A session's metadata at one KV revision; `meta` null when that revision deleted it. */
export interface KnownMeta {
  meta: SessionMeta | null;
  revision: number;
}

/** How long a watched revision is remembered: a read from storage slower than this fills nothing. */
export const REMEMBER_MS = 5_000;
/** Sessions whose metadata a replica keeps (least recently used goes first): ~300 bytes each. */
export const DEFAULT_KNOWN_METAS = 20_000;

/**
 * The metadata of recently used sessions at the newest revision this process knows, for the
 * partitions it watches (owned-partitions.ts). Three sources feed it, and a value only ever moves
 * to a higher revision, whichever arrives last:
 * - the partition's watch, which delivers every write of every replica in revision order;
 * - this process's reads from storage and its own acknowledged writes (`fill`), which may be
 *   overtaken: a read that found revision 5 can return after the watch delivered 6. The watch's revisions of the last REMEMBER_MS are kept per key,
 *   even for keys not cached, so such a read never puts 5 back; a read slower than that fills
 *   nothing.
 */
export class KnownMetas {
  private readonly entries = new Map<string, { partition: number; known: KnownMeta }>();
  /** The newest watched revision per key, oldest delivery first. */
  private readonly watched = new Map<string, { revision: number; at: number }>();

  constructor(
    private readonly limit = DEFAULT_KNOWN_METAS,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): KnownMeta | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.known;
  }

  /** The watch of `partition` delivered `known`: cached values move forward, others are remembered. */
  watchedWrite(partition: number, key: string, known: KnownMeta): void {
    const now = this.now();
    this.watched.delete(key);
    this.watched.set(key, { revision: known.revision, at: now });
    for (const [oldest, seen] of this.watched) {
      if (now - seen.at < REMEMBER_MS) break;
      this.watched.delete(oldest);
    }
    if (this.entries.has(key)) this.put(partition, key, known);
  }

  /**
   * Storage answered `known` to a read, or acknowledged this process's write of it, for a request
   * sent at `startedAt`.
   */
  fill(partition: number, key: string, known: KnownMeta, startedAt: number): void {
    if (this.now() - startedAt >= REMEMBER_MS || this.overtaken(key, known.revision)) return;
    this.put(partition, key, known);
  }

  /** Drops what is cached of `partition` (its watch stopped or lost its place). */
  dropPartition(partition: number): void {
    for (const [key, hit] of this.entries) if (hit.partition === partition) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private overtaken(key: string, revision: number): boolean {
    const seen = this.watched.get(key);
    return seen !== undefined && seen.revision > revision;
  }

  private put(partition: number, key: string, known: KnownMeta): void {
    const current = this.entries.get(key);
    if (current && current.known.revision >= known.revision) return;
    this.entries.delete(key);
    this.entries.set(key, { partition, known });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.limit) break;
      this.entries.delete(oldest);
    }
  }
}
