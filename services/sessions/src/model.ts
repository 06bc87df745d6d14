/** What the sessions service stores, shared by both repository adapters. */

import { randomUUID } from "node:crypto";
import { z } from "zod";

export interface SessionMeta {
  key: string;
  agentId: string;
  model: string;
  /** "" when unset, else low | medium | high. */
  thinking: string;
  createdAt: number;
  updatedAt: number;
  /** Entries on the current branch (a compaction summary counts as one). */
  messageCount: number;
  /** The current branch's newest entry; "" while the history is empty. */
  leafId: string;
  /**
   * Random per creation. History written under an earlier session with the same key (a delete
   * that raced an append) carries another generation and is never read as this session's.
   */
  gen: string;
  /** JetStream: stream sequence of the newest batch the metadata reflects (0 in the file store). */
  historySeq: number;
}

/**
 * SessionMeta as it is read back from storage (the KV bucket, a metadata file, the list index):
 * never cast. Every field has been written since the first version; keys it does not name are
 * dropped, so a newer writer's extra fields do not stop an older reader.
 */
export const SessionMetaSchema = z.object({
  key: z.string(),
  agentId: z.string(),
  model: z.string(),
  thinking: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  messageCount: z.number(),
  leafId: z.string(),
  gen: z.string(),
  historySeq: z.number(),
}) satisfies z.ZodType<SessionMeta>;

export interface StoredEntry {
  id: string;
  /** "" for the first entry of a history. */
  parentId: string;
  role: string;
  sender: string;
  body: string;
  timestamp: number;
  runId: string;
  /** "message", or "summary" for the entry compaction writes. */
  kind: string;
  /** SessionEntry.meta_json as base64; "" when empty. */
  meta: string;
}

/**
 * One atomic write to a session's history: the entries of one append, or a new base that
 * replaces everything before it (reset: no entries; compaction: summary + kept tail).
 */
export interface Batch {
  gen: string;
  base: boolean;
  /** Entries on the branch once this batch is applied. */
  count: number;
  /** When it was written (ms since the epoch): the session's updatedAt. */
  at: number;
  entries: StoredEntry[];
}

/** Where the current branch ends. Two equal tips describe the same history (leaf ids are unique). */
export interface Tip {
  count: number;
  leafId: string;
}

/** A session as it is created: bound to `agentId` and its model, no messages, a new history generation. */
export function newSessionMeta(key: string, agentId: string, model: string, now: number): SessionMeta {
  return { key, agentId, model, thinking: "", createdAt: now, updatedAt: now, messageCount: 0, leafId: "", gen: randomUUID(), historySeq: 0 };
}

export const EMPTY_TIP: Tip = Object.freeze({ count: 0, leafId: "" });

export function tipOf(batch: Batch | undefined, gen: string): Tip {
  if (batch === undefined || batch.gen !== gen) return EMPTY_TIP;
  return { count: batch.count, leafId: batch.entries.at(-1)?.id ?? "" };
}

export function sameTip(a: Tip, b: Tip): boolean {
  return a.count === b.count && a.leafId === b.leafId;
}
