import { type EncodedJson, encodeJson, type SessionPreviewView, type SessionSummary, sessionPreviewView } from "@gw/contracts";
import { toEntry, toSummary } from "../convert.js";
import type { SessionMeta, StoredEntry } from "../model.js";

interface Answer {
  limit: number;
  /** The summary's fields as they were when the bytes were made. */
  summary: SessionSummary;
  /** The very entry objects the bytes were made from (stored entries are never changed in place). */
  entries: StoredEntry[];
  json: EncodedJson<SessionPreviewView>;
  /** When it was last handed out (a counter), for evicting the least recently used. */
  used: number;
}

export interface EncodedPreviewLimits {
  answers: number;
  bytes: number;
}

/** Whether `meta` still has the summary the answer was made from (no summary is built to check). */
const sameSummary = (a: SessionSummary, meta: SessionMeta) =>
  a.key === meta.key &&
  a.agentId === meta.agentId &&
  a.model === meta.model &&
  a.thinking === meta.thinking &&
  a.createdAt === meta.createdAt &&
  a.updatedAt === meta.updatedAt &&
  a.messageCount === meta.messageCount;
/** Cached bytes never leave: a caller that writes into its answer cannot spoil the next one. */
const copyOf = <T>(json: EncodedJson<T>) => Buffer.from(json) as EncodedJson<T>;
const sameEntries = (a: StoredEntry[], b: StoredEntry[]) => a.length === b.length && a.every((e, i) => e === b[i]);

/**
 * `sessions.preview` payloads as EncodedJson (the client-facing JSON the bus answer carries and
 * the edge splices into its frame), reused while a session's summary and tail stay the same.
 * Nothing is trusted but the content: an answer is reused only when the summary is equal field by
 * field and the tail is the same entry objects (the tail cache hands out the objects it holds), so
 * a changed session is re-encoded, never served stale. Bounded LRU by answers and bytes.
 */
export class EncodedPreviews {
  /**
   * By session key, then by limit. Keyed by the stored key string itself (its hash is computed
   * once) and stamped on use, so a hit builds no string and moves no map entry.
   */
  private readonly answers = new Map<string, Answer[]>();
  private count = 0;
  private bytes = 0;
  private clock = 0;

  constructor(private readonly limits: EncodedPreviewLimits = { answers: 512, bytes: 16 * 2 ** 20 }) {}

  /** The preview payload as EncodedJson, a copy the caller owns. */
  encode(limit: number, meta: SessionMeta, entries: StoredEntry[]): EncodedJson<SessionPreviewView> {
    const forKey = this.answers.get(meta.key);
    const hit = forKey?.find((a) => a.limit === limit);
    if (hit && sameSummary(hit.summary, meta) && sameEntries(hit.entries, entries)) {
      hit.used = ++this.clock;
      return copyOf(hit.json);
    }
    const summary = toSummary(meta);
    const json = encodeJson(sessionPreviewView(summary, entries.map(toEntry)));
    if (hit) this.forget(meta.key, hit);
    if (json.length <= this.limits.bytes / 4) this.remember(meta.key, { limit, summary, entries, json, used: ++this.clock });
    return copyOf(json);
  }

  /** Whether an answer for this key and limit is kept (whatever its freshness). */
  holds(key: string, limit: number): boolean {
    return this.answers.get(key)?.some((a) => a.limit === limit) ?? false;
  }

  get size(): { answers: number; bytes: number } {
    return { answers: this.count, bytes: this.bytes };
  }

  private remember(key: string, answer: Answer): void {
    const forKey = this.answers.get(key);
    if (forKey) forKey.push(answer);
    else this.answers.set(key, [answer]);
    this.count++;
    this.bytes += answer.json.length;
    while (this.count > this.limits.answers || this.bytes > this.limits.bytes) this.evictOldest();
  }

  private forget(key: string, answer: Answer): void {
    const forKey = this.answers.get(key);
    if (forKey === undefined) return;
    const index = forKey.indexOf(answer);
    if (index === -1) return;
    forKey.splice(index, 1);
    if (forKey.length === 0) this.answers.delete(key);
    this.count--;
    this.bytes -= answer.json.length;
  }

  /** Eviction scans every answer; it runs only when an insert goes over a bound. */
  private evictOldest(): void {
    let oldest: { key: string; answer: Answer } | undefined;
    for (const [key, forKey] of this.answers) {
      for (const answer of forKey) if (oldest === undefined || answer.used < oldest.answer.used) oldest = { key, answer };
    }
    if (oldest === undefined) return;
    this.forget(oldest.key, oldest.answer);
  }
}
