import { encodeSubjectToken } from "@gw/bus";
import { GatewayError } from "@gw/contracts";
import { publishExpecting } from "@gw/store";
import type { JetStreamClient, JetStreamManager, StoredMsg } from "@nats-io/jetstream";
import { headers } from "@nats-io/nats-core";
import { decodeBatch, encodeBatch } from "../storage/batch-codec.js";
import { type Batch, type SessionMeta, type StoredEntry, type Tip, tipOf } from "../model.js";
import { TailCache, type TailCacheLimits } from "../storage/tail-cache.js";
import { isSequenceConflict, storeError } from "./jetstream-errors.js";
import { encodeMarks, type EntryRange, MARKS_HEADER, type Mark, readMarks, readRange, tailStart } from "./jetstream-reads.js";
import { partitionOf, type SessionPartition } from "./session-streams.js";

/** Reads of a history that was rolled away under them, again and again, before giving up. */
export const READ_ATTEMPTS = 20;
export const movingHistory = (key: string) =>
  new GatewayError("UNAVAILABLE", `could not read session ${key}: its history kept being rewritten; try again`);

/**
 * Session histories in their partitions' streams, one subject per session: the newest batch,
 * the conditional publish every write goes through, and tails, from memory or from the stream.
 * Tails are cached by the stream sequence of the subject's newest message: a sequence is never
 * reused and its message never changes, so a tail cached for the sequence a read just saw is that
 * history, whichever replica wrote it. Every read still asks the stream for that sequence.
 */
export class HistoryStream {
  readonly tails: TailCache;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly partitions: readonly SessionPartition[],
    cache: TailCacheLimits | undefined,
    /** Throws once the repository is closed. */
    private readonly assertOpen: () => void,
  ) {
    this.tails = new TailCache(cache);
  }

  part(key: string): SessionPartition {
    return this.partitions[partitionOf(key, this.partitions.length)]!;
  }

  subject(key: string): string {
    return `${this.part(key).subjectRoot}.${encodeSubjectToken(key)}`;
  }

  /** The newest batch of the session's subject, or null when it has no history. */
  async last(key: string): Promise<StoredMsg | null> {
    this.assertOpen();
    const part = this.part(key);
    const query = { last_by_subj: this.subject(key) };
    try {
      return await (part.direct ? this.jsm.direct.getMessage(part.stream, query) : this.jsm.streams.getMessage(part.stream, query));
    } catch (err) {
      throw storeError(err, "read");
    }
  }

  /** The stream sequence, or undefined when another writer moved the subject first. */
  async publish(key: string, batch: Batch, expectedLast: number, marks: Mark[]): Promise<number | undefined> {
    this.assertOpen();
    const hdrs = headers();
    if (marks.length > 0) hdrs.set(MARKS_HEADER, encodeMarks(marks));
    if (batch.base) hdrs.set("Nats-Rollup", "sub");
    try {
      return await publishExpecting(this.js, this.subject(key), encodeBatch(batch), expectedLast, hdrs);
    } catch (err) {
      if (isSequenceConflict(err)) return undefined;
      throw storeError(err, "append");
    }
  }

  /** Drops the session's whole history from the stream (the caller forgets its cached tail). */
  async purge(key: string): Promise<void> {
    await this.jsm.streams.purge(this.part(key).stream, { filter: this.subject(key) });
  }

  /**
   * The tail of an owned partition's session from memory: the metadata names the newest batch it
   * reflects (`historySeq`, recorded before any append is acknowledged), and a tail cached for
   * exactly that batch is that history.
   */
  ownedTail(meta: SessionMeta, limit: number): StoredEntry[] | undefined {
    if (meta.messageCount === 0) return [];
    return this.tails.read(meta.key, meta.gen, meta.historySeq, limit);
  }

  /** The newest `limit` entries, newest first, read again while the history is rolled away under the read. */
  async tail(meta: SessionMeta, limit: number): Promise<StoredEntry[]> {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const found = await this.tailFrom(meta, await this.last(meta.key), limit);
      if (found) return found;
    }
    throw movingHistory(meta.key);
  }

  /**
   * The newest `limit` entries of the history that ends at `newest`, newest first: from the
   * cache, or one ordered consumer from the mark the newest batch names. Undefined when that
   * history was rolled away meanwhile (read the newest batch again).
   */
  async tailFrom(meta: SessionMeta, newest: StoredMsg | null, limit: number): Promise<StoredEntry[] | undefined> {
    if (!newest) return [];
    const cached = this.tails.read(meta.key, meta.gen, newest.seq, limit);
    if (cached) return cached;
    const batch = decodeBatch(newest.data);
    // Another session's (a delete raced an append): this session's branch is still empty.
    if (!batch || batch.gen !== meta.gen) return [];
    const start = tailStart(newest, batch, limit);
    let branch: StoredEntry[] | undefined = batch.entries;
    if (start !== "newest") {
      const range = this.range(meta, newest);
      branch = await this.read(start === undefined ? range : { ...range, startSeq: start });
      if (!branch) return undefined;
    }
    const out = branch.slice(-limit).reverse();
    const first = readMarks(newest)[0];
    const fromStart =
      start === undefined ||
      batch.base ||
      first === undefined ||
      (start !== "newest" && first.seq === start && first.before === 0);
    this.tails.fill(meta.key, meta.gen, newest.seq, out, out.length < limit && fromStart);
    return out;
  }

  /** The whole current branch, oldest first, and its tip. */
  async branch(meta: SessionMeta): Promise<{ entries: StoredEntry[]; tip: Tip }> {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const last = await this.last(meta.key);
      if (!last) return { entries: [], tip: tipOf(undefined, meta.gen) };
      const entries = await this.read(this.range(meta, last));
      if (entries) return { entries, tip: tipOf(decodeBatch(last.data), meta.gen) };
    }
    throw movingHistory(meta.key);
  }

  private range(meta: SessionMeta, last: StoredMsg): EntryRange {
    return { stream: this.part(meta.key).stream, subject: this.subject(meta.key), lastSeq: last.seq, gen: meta.gen };
  }

  private async read(range: EntryRange): Promise<StoredEntry[] | undefined> {
    try {
      return await readRange(this.jsm, this.js, range);
    } catch (err) {
      throw storeError(err, "read");
    }
  }
}
