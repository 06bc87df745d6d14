import { encodeMessage, RPC, type SessionSummary, sessionPreviewView } from "@gw/contracts";
import { toEntry, toSummary } from "./convert.js";
import type { SessionMeta, StoredEntry } from "./model.js";

interface Answer {
  /** The summary's fields as they were when the bytes were made. */
  summary: SessionSummary;
  /** The very entry objects the bytes were made from (stored entries are never changed in place). */
  entries: StoredEntry[];
  bytes: Uint8Array;
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
const sameEntries = (a: StoredEntry[], b: StoredEntry[]) => a.length === b.length && a.every((e, i) => e === b[i]);

/**
 * Encoded `sessions.preview` answers (the client-facing JSON inside the bus response), reused while a session's summary and tail stay the same.
 * Nothing is trusted but the content: an answer is reused only when the summary is equal field by
 * field and the tail is the same entry objects (the tail cache hands out the objects it holds), so
 * a changed session is re-encoded, never served stale. Bounded LRU by answers and bytes.
 */
export class EncodedPreviews {
  private readonly answers = new Map<string, Answer>();
  private bytes = 0;

  constructor(private readonly limits: EncodedPreviewLimits = { answers: 512, bytes: 16 * 2 ** 20 }) {}

  /** The encoded SessionsPreviewResponse, a copy the caller owns. */
  encode(limit: number, meta: SessionMeta, entries: StoredEntry[]): Uint8Array {
    const id = `${limit}:${meta.key}`;
    const hit = this.answers.get(id);
    if (hit && sameSummary(hit.summary, meta) && sameEntries(hit.entries, entries)) {
      this.answers.delete(id);
      this.answers.set(id, hit);
      return hit.bytes.slice();
    }
    const summary = toSummary(meta);
    const viewJson = Buffer.from(JSON.stringify(sessionPreviewView(summary, entries.map(toEntry))), "utf8");
    const bytes = encodeMessage(RPC.sessionsPreview.response, { viewJson });
    this.remember(id, { summary, entries, bytes });
    return bytes.slice();
  }

  get size(): { answers: number; bytes: number } {
    return { answers: this.answers.size, bytes: this.bytes };
  }

  private remember(id: string, answer: Answer): void {
    const old = this.answers.get(id);
    if (old) {
      this.answers.delete(id);
      this.bytes -= old.bytes.length;
    }
    if (answer.bytes.length > this.limits.bytes / 4) return;
    this.answers.set(id, answer);
    this.bytes += answer.bytes.length;
    for (const [oldest, { bytes }] of this.answers) {
      if (this.answers.size <= this.limits.answers && this.bytes <= this.limits.bytes) break;
      this.answers.delete(oldest);
      this.bytes -= bytes.length;
    }
  }
}
