import { encodeSubjectToken } from "@gw/bus";
import { GatewayError } from "@gw/contracts";
import { kvSubject, publishExpecting, purgeKvKey } from "@gw/store";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager, type StoredMsg } from "@nats-io/jetstream";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { decodeBatch, encodeBatch } from "../storage/batch-codec.js";
import type { PageQuery, SessionIndex, SessionPage } from "../list-index/session-index.js";
import { withHistory } from "../storage/meta-update.js";
import { type Batch, type SessionMeta, type StoredEntry, sameTip, type Tip, tipOf } from "../model.js";
import type { NewSession, SessionRepository } from "../repository.js";
import { TailCache, type TailCacheLimits } from "../storage/tail-cache.js";
import { backoff, isSequenceConflict, storeError } from "./jetstream-errors.js";
import { encodeMarks, MARKS_HEADER, type Mark, nextMarks, readMarks, readRange, tailStart } from "./jetstream-reads.js";
import { createManyInPartitions } from "./jetstream-bulk.js";
import { decodeMeta, encodeMeta } from "./meta-codec.js";
import { OwnedPartitions } from "./owned-partitions.js";
import { ensureSessionStreams, partitionOf, type SessionPartition, type SessionStreamOptions } from "./session-streams.js";

export interface JetStreamSessionOptions extends SessionStreamOptions {
  /** The ordered index behind `sessions.list` (Redis in production), fed by every write. */
  index: SessionIndex;
  /** Bounds of the in-memory tails that spare previews and history loads the stream reads. */
  cache?: TailCacheLimits;
  /** Told when the index missed a write (the index feed repairs it). */
  onIndexError?: (err: unknown) => void;
  /** Told when the watch of an owned partition failed (it starts again by itself). */
  onWatchError?: (err: unknown) => void;
}

const MAX_ATTEMPTS = 200;

const gone = (key: string) => new GatewayError("NOT_FOUND", `unknown session: ${key}`);
/** Reads of a history that was rolled away under them, again and again, before giving up. */
const READ_ATTEMPTS = 20;
const movingHistory = (key: string) =>
  new GatewayError("UNAVAILABLE", `could not read session ${key}: its history kept being rewritten; try again`);

/**
 * Distributed mode. A session lives in the partition its key hashes to (session-streams.ts):
 * metadata in that partition's KV bucket, history in its stream with one subject per session.
 * Every write to a subject carries Nats-Expected-Last-Subject-Sequence, so of two replicas racing
 * on one session exactly one wins and the other re-reads and retries: no fork, no lost entry.
 * Reset and compaction publish a base batch with `Nats-Rollup: sub`, which drops the older
 * history atomically with the write. Every metadata write also goes to the list index, with its
 * KV revision as the version.
 */
export class JetStreamSessionRepository implements SessionRepository {
  private closed = false;
  /**
   * Tails by the stream sequence of the subject's newest message: a sequence is never reused and
   * its message never changes, so a tail cached for the sequence a read just saw is that history,
   * whichever replica wrote it. Every read still asks the stream for that sequence.
   */
  private readonly tails: TailCache;
  /** Metadata of the owned partitions' sessions, kept current by a watch of their buckets. */
  private readonly owned: OwnedPartitions;
  private readonly js: JetStreamClient;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly partitions: SessionPartition[],
    private readonly opts: JetStreamSessionOptions,
  ) {
    this.js = jetstream(nc);
    this.tails = new TailCache(opts.cache);
    this.owned = new OwnedPartitions({ nc, js: this.js, jsm, partitions, onError: opts.onWatchError });
  }

  static async open(nc: NatsConnection, opts: JetStreamSessionOptions): Promise<JetStreamSessionRepository> {
    const jsm = await jetstreamManager(nc);
    return new JetStreamSessionRepository(nc, jsm, await ensureSessionStreams(nc, jsm, opts), opts);
  }

  /**
   * The partitions this replica owns now (partition-routing.ts): their metadata, and with it the
   * tails the tail cache holds, answer from memory, current as of the partitions' watches.
   */
  own(partitions: ReadonlySet<number>): void {
    this.owned.own(partitions);
  }

  /** Resolves once the owned partitions' watches have delivered every write made before the call. */
  caughtUp(): Promise<void> {
    return this.owned.caughtUp();
  }

  async getMeta(key: string): Promise<SessionMeta | null> {
    return (await this.readMeta(key))?.meta ?? null;
  }

  async createMeta(meta: SessionMeta): Promise<{ meta: SessionMeta; created: boolean }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const part = this.part(meta.key);
      const pending = this.owned.begin(part.index);
      try {
        const revision = await part.kv.create(this.kvKey(meta.key), encodeMeta(meta));
        this.owned.fill(pending, meta.key, { meta, revision });
        await this.indexPut(meta, revision);
        return { meta, created: true };
      } catch (err) {
        if (!isSequenceConflict(err)) throw storeError(err, "create");
      }
      const existing = await this.getMeta(meta.key);
      if (existing) return { meta: existing, created: false };
      await backoff(attempt);
    }
    throw new GatewayError("UNAVAILABLE", `could not create session ${meta.key}: too much contention`);
  }

  async updateMeta(key: string, mutate: (current: SessionMeta) => SessionMeta | undefined) {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      // A retry reads storage: the cached value may be the one another writer just replaced.
      const current = await this.readMeta(key, attempt > 0);
      if (!current) return null;
      const next = mutate({ ...current.meta });
      if (next === undefined) return { before: current.meta, after: current.meta };
      let revision: number;
      const part = this.part(key);
      const pending = this.owned.begin(part.index);
      try {
        // Compare-and-set that holds on R3 too (libs/store jetstream-fence.ts): the KV revision is
        // the stream sequence of the key's subject.
        revision = await publishExpecting(this.js, kvSubject(part.bucket, this.kvKey(key)), encodeMeta(next), current.revision);
        this.owned.fill(pending, key, { meta: next, revision });
      } catch (err) {
        if (!isSequenceConflict(err)) throw storeError(err, "update");
        await backoff(attempt);
        continue;
      }
      await this.indexPut(next, revision);
      return { before: current.meta, after: next };
    }
    throw new GatewayError("UNAVAILABLE", `could not update session ${key}: too much contention`);
  }

  async listPage(query: PageQuery): Promise<SessionPage> {
    this.assertOpen();
    return this.opts.index.page(query);
  }

  createMany(sessions: NewSession[]): Promise<number> {
    this.assertOpen();
    return createManyInPartitions(sessions, {
      js: this.js,
      partitionOf: (key) => this.part(key),
      subject: (key) => this.subject(key),
      kvKey: (key) => this.kvKey(key),
      index: this.opts.index,
    });
  }

  async append(meta: SessionMeta, build: (tip: Tip) => Batch): Promise<{ batch: Batch; meta: SessionMeta }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const last = await this.last(meta.key);
      const lastBatch = last ? decodeBatch(last.data) : undefined;
      const batch = build(tipOf(lastBatch, meta.gen));
      // History left by an earlier session under this key (a delete raced an append) is rolled away.
      if (lastBatch && lastBatch.gen !== meta.gen) batch.base = true;
      const marks = last && lastBatch && !batch.base ? nextMarks(last, lastBatch, batch.count) : [];
      const seq = await this.publish(meta.key, batch, last?.seq ?? 0, marks);
      if (seq === undefined) {
        await backoff(attempt);
        continue;
      }
      this.tails.written(meta.key, last?.seq ?? 0, seq, batch);
      const after = await this.recordHistory(meta, batch, seq);
      return { batch, meta: after };
    }
    throw new GatewayError("UNAVAILABLE", `could not append to session ${meta.key}: too much contention`);
  }

  async replace(meta: SessionMeta, batch: Batch, expected?: Tip): Promise<{ meta: SessionMeta } | false> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const last = await this.last(meta.key);
      if (expected && !sameTip(tipOf(last ? decodeBatch(last.data) : undefined, meta.gen), expected)) return false;
      const base = { ...batch, base: true };
      const seq = await this.publish(meta.key, base, last?.seq ?? 0, []);
      if (seq !== undefined) {
        this.tails.written(meta.key, last?.seq ?? 0, seq, base);
        return { meta: await this.recordHistory(meta, batch, seq) };
      }
      if (expected) return false;
      await backoff(attempt);
    }
    throw new GatewayError("UNAVAILABLE", `could not rewrite session ${meta.key}: too much contention`);
  }

  async tail(meta: SessionMeta, limit: number): Promise<StoredEntry[]> {
    const known = this.owned.read(this.part(meta.key).index, meta.key)?.meta;
    if (known && known.gen === meta.gen) {
      const cached = this.ownedTail(known, limit);
      if (cached) return cached;
    }
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const found = await this.tailFrom(meta, await this.last(meta.key), limit);
      if (found) return found;
    }
    throw movingHistory(meta.key);
  }

  async preview(key: string, limit: number): Promise<{ meta: SessionMeta; entries: StoredEntry[] } | null> {
    const known = this.owned.read(this.part(key).index, key);
    if (known) {
      if (!known.meta) return null;
      const entries = this.ownedTail(known.meta, limit);
      if (entries) return { meta: known.meta, entries };
    }
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      // Both reads at once: one round trip instead of two, as current as reading them in turn.
      const [current, newest] = await Promise.all([this.readMeta(key), this.last(key)]);
      if (!current) return null;
      const entries = await this.tailFrom(current.meta, newest, limit);
      if (entries) return { meta: current.meta, entries };
    }
    throw movingHistory(key);
  }

  /**
   * The tail of an owned partition's session from memory: the metadata names the newest batch it
   * reflects (`historySeq`, recorded before any append is acknowledged), and a tail cached for
   * exactly that batch is that history.
   */
  private ownedTail(meta: SessionMeta, limit: number): StoredEntry[] | undefined {
    if (meta.messageCount === 0) return [];
    return this.tails.read(meta.key, meta.gen, meta.historySeq, limit);
  }

  /**
   * The newest `limit` entries of the history that ends at `newest`, newest first: from the
   * cache, or one ordered consumer from the mark the newest batch names. Undefined when that
   * history was rolled away meanwhile (read the newest batch again).
   */
  private async tailFrom(meta: SessionMeta, newest: StoredMsg | null, limit: number): Promise<StoredEntry[] | undefined> {
    if (!newest) return [];
    const cached = this.tails.read(meta.key, meta.gen, newest.seq, limit);
    if (cached) return cached;
    const batch = decodeBatch(newest.data);
    // Another session's (a delete raced an append): this session's branch is still empty.
    if (!batch || batch.gen !== meta.gen) return [];
    const start = tailStart(newest, batch, limit);
    let branch: StoredEntry[] | undefined = batch.entries;
    if (start !== "newest") {
      const range = { stream: this.part(meta.key).stream, subject: this.subject(meta.key), lastSeq: newest.seq, gen: meta.gen };
      try {
        branch = await readRange(this.jsm, this.js, start === undefined ? range : { ...range, startSeq: start });
      } catch (err) {
        throw storeError(err, "read");
      }
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

  async branch(meta: SessionMeta): Promise<{ entries: StoredEntry[]; tip: Tip }> {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const last = await this.last(meta.key);
      if (!last) return { entries: [], tip: tipOf(undefined, meta.gen) };
      let entries: StoredEntry[] | undefined;
      try {
        const range = { stream: this.part(meta.key).stream, subject: this.subject(meta.key), lastSeq: last.seq, gen: meta.gen };
        entries = await readRange(this.jsm, this.js, range);
      } catch (err) {
        throw storeError(err, "read");
      }
      if (entries) return { entries, tip: tipOf(decodeBatch(last.data), meta.gen) };
    }
    throw movingHistory(meta.key);
  }

  async delete(key: string): Promise<boolean> {
    const existed = (await this.readMeta(key)) !== null;
    if (!existed) return false;
    const part = this.part(key);
    const pending = this.owned.begin(part.index);
    let revision: number;
    try {
      // Metadata first: once it is gone the session is gone, even if the purge below never runs.
      revision = await purgeKvKey(this.js, part.bucket, this.kvKey(key));
      this.owned.fill(pending, key, { meta: null, revision });
      await this.jsm.streams.purge(part.stream, { filter: this.subject(key) });
    } catch (err) {
      throw storeError(err, "delete");
    } finally {
      this.tails.forget(key);
    }
    await this.indexed(() => this.opts.index.remove(key, revision));
    return true;
  }

  /** What the index feed reads: this repository's partitions and its JetStream handles. */
  feedParts(): { js: JetStreamClient; jsm: JetStreamManager; partitions: readonly SessionPartition[] } {
    return { js: this.js, jsm: this.jsm, partitions: this.partitions };
  }

  isHealthy(): boolean {
    return !this.closed && !this.nc.isClosed();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.owned.close();
  }

  /** Moves the metadata's count/leaf/updatedAt to `seq`, unless a later batch got there first. */
  private async recordHistory(meta: SessionMeta, batch: Batch, seq: number): Promise<SessionMeta> {
    const result = await this.updateMeta(meta.key, (current) => {
      if (current.gen !== meta.gen || current.historySeq >= seq) return undefined;
      return { ...withHistory(current, tipOf(batch, meta.gen), batch.at), historySeq: seq };
    });
    if (!result || result.after.gen !== meta.gen) throw gone(meta.key);
    return result.after;
  }

  private indexPut(meta: SessionMeta, revision: number): Promise<void> {
    return this.indexed(() => this.opts.index.put(meta, revision));
  }

  /**
   * The write is durable already: an index that missed it must not fail it (a retried append
   * would add its entries twice). The index feed applies every change from the KV stream.
   */
  private async indexed(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      this.opts.onIndexError?.(err);
    }
  }

  /** The stream sequence, or undefined when another writer moved the subject first. */
  private async publish(key: string, batch: Batch, expectedLast: number, marks: Mark[]): Promise<number | undefined> {
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

  private async last(key: string): Promise<StoredMsg | null> {
    this.assertOpen();
    const part = this.part(key);
    const query = { last_by_subj: this.subject(key) };
    try {
      return await (part.direct ? this.jsm.direct.getMessage(part.stream, query) : this.jsm.streams.getMessage(part.stream, query));
    } catch (err) {
      throw storeError(err, "read");
    }
  }

  /** From memory when the key's partition is owned (unless `fresh`), else from its bucket. */
  private async readMeta(key: string, fresh = false): Promise<{ meta: SessionMeta; revision: number } | null> {
    this.assertOpen();
    const part = this.part(key);
    const known = fresh ? undefined : this.owned.read(part.index, key);
    if (known) return known.meta ? { meta: known.meta, revision: known.revision } : null;
    const pending = this.owned.begin(part.index);
    try {
      const entry = await part.kv.get(this.kvKey(key));
      if (!entry) return null;
      const meta = entry.operation === "PUT" ? (decodeMeta(entry.value) ?? null) : null;
      this.owned.fill(pending, key, { meta, revision: entry.revision });
      return meta ? { meta, revision: entry.revision } : null;
    } catch (err) {
      throw storeError(err, "read");
    }
  }

  private part(key: string): SessionPartition {
    return this.partitions[partitionOf(key, this.partitions.length)]!;
  }

  private subject(key: string): string {
    return `${this.part(key).subjectRoot}.${encodeSubjectToken(key)}`;
  }

  private kvKey(key: string): string {
    return encodeSubjectToken(key);
  }

  private assertOpen(): void {
    if (this.closed) throw new GatewayError("UNAVAILABLE", "the session store is closed");
  }
}
