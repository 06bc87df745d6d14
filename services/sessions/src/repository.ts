import type { PageQuery, SessionPage } from "./list-index/session-index.js";
import type { Batch, SessionMeta, StoredEntry, Tip } from "./model.js";

/** A session to store in bulk: its metadata and its whole history (one batch). */
export interface NewSession {
  meta: SessionMeta;
  entries: StoredEntry[];
}

/**
 * The storage port of the sessions service: JetStream (KV + stream) in distributed mode, files
 * under the data dir in embedded mode. Both pass repository.contract.ts.
 *
 * Concurrency: every method may run concurrently with any other, from several replicas (JetStream)
 * or several requests (files); appends never fork or lose an entry, creation happens once.
 */
export interface SessionRepository {
  getMeta(key: string): Promise<SessionMeta | null>;
  /** Stores `meta` unless the key exists; exactly one of concurrent callers sees `created: true`. */
  createMeta(meta: SessionMeta): Promise<{ meta: SessionMeta; created: boolean }>;
  /**
   * Read-modify-write of the metadata, retried when another writer got there first. `mutate`
   * returns the new metadata, or undefined to leave it as it is. Null when the session is gone.
   */
  updateMeta(
    key: string,
    mutate: (current: SessionMeta) => SessionMeta | undefined,
  ): Promise<{ before: SessionMeta; after: SessionMeta } | null>;
  /**
   * One page of sessions, newest first (the key breaks ties), optionally of one agent, and how
   * many there are in all: from an ordered index, O(log N + page), never a pass over every
   * session. It shows every write acknowledged before the call.
   */
  listPage(query: PageQuery): Promise<SessionPage>;
  /**
   * Stores many new sessions at once with their histories (imports, benchmarks): pipelined,
   * without a round trip per session. A key that already exists is left as it is. Returns how
   * many were created.
   */
  createMany(sessions: NewSession[]): Promise<number>;
  /**
   * Appends one batch after the current tip and brings the metadata's count, leaf and
   * updatedAt along. `build` makes the batch for the tip it lands on; it is called again when
   * a concurrent write moved the tip first.
   */
  append(meta: SessionMeta, build: (tip: Tip) => Batch): Promise<{ batch: Batch; meta: SessionMeta }>;
  /**
   * Replaces the whole history with `batch` (a base), only while the history still ends at
   * `expected` (undefined: unconditionally). False when it moved on.
   */
  replace(meta: SessionMeta, batch: Batch, expected?: Tip): Promise<{ meta: SessionMeta } | false>;
  /** The newest `limit` entries of the current branch, newest first, reading only the tail. */
  tail(meta: SessionMeta, limit: number): Promise<StoredEntry[]>;
  /**
   * The session's metadata and the newest `limit` entries of its branch (as `tail`), read
   * together; null when there is no such session.
   */
  preview(key: string, limit: number): Promise<{ meta: SessionMeta; entries: StoredEntry[] } | null>;
  /** The whole current branch, oldest first, and the tip it ends at. */
  branch(meta: SessionMeta): Promise<{ entries: StoredEntry[]; tip: Tip }>;
  /** Removes metadata and history for good. False when there was no such session. */
  delete(key: string): Promise<boolean>;
  /**
   * Distributed mode: the partitions this replica owns now (partition-routing.ts), which the
   * store may answer from memory (JetStream: owned-partitions.ts). Absent where every read goes
   * to storage anyway.
   */
  own?(partitions: ReadonlySet<number>): void;
  isHealthy(): boolean;
  close(): Promise<void>;
}
