import type { SessionMeta } from "../model.js";

/** One page of `sessions.list`: newest first (the key breaks ties), and how many match in all. */
export interface SessionPage {
  sessions: SessionMeta[];
  total: number;
}

export interface PageQuery {
  /** "" for every agent. */
  agentId: string;
  offset: number;
  limit: number;
}

/**
 * The ordered index behind `sessions.list`: every session's metadata by (updatedAt desc, key
 * asc), overall and per agent, so a page costs O(log N + page) instead of a pass over every
 * session. Redis sorted sets in distributed mode, sorted arrays in memory in embedded mode; both
 * pass session-index.contract.ts.
 *
 * It is derived state, rebuilt from the repository when lost. Writes carry a version that grows
 * with every change of one key (the KV revision, or a per-process counter): a write with a
 * version at or below the one the index holds for that key (a removal included) changes nothing,
 * so writers that race, or a catch-up that replays old changes, never move the index backwards.
 */
export interface SessionIndex {
  put(meta: SessionMeta, version: number): Promise<void>;
  remove(key: string, version: number): Promise<void>;
  page(query: PageQuery): Promise<SessionPage>;
  /**
   * Names this index's content: the same for every caller until the content is lost (a Redis
   * flush, a new process for the memory index), then a new one. A feed that fills the index from
   * the store starts over from the store's current state whenever it changes.
   */
  epoch(): Promise<string>;
  close(): Promise<void>;
}

/** Newest first; the key breaks ties so pages never overlap or skip. */
export function newestFirst(a: SessionMeta, b: SessionMeta): number {
  return b.updatedAt - a.updatedAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
