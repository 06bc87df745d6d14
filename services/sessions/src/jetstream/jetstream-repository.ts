import { encodeSubjectToken } from "@gw/bus";
import { GatewayError } from "@gw/contracts";
import { kvSubject, publishExpecting, purgeKvKey } from "@gw/store";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { decodeBatch } from "../storage/batch-codec.js";
import type { PageQuery, SessionIndex, SessionPage } from "../list-index/session-index.js";
import { withHistory } from "../storage/meta-update.js";
import { type Batch, type SessionMeta, type StoredEntry, sameTip, type Tip, tipOf } from "../model.js";
import type { NewSession, SessionRepository } from "../repository.js";
import type { TailCacheLimits } from "../storage/tail-cache.js";
import { HistoryStream, movingHistory, READ_ATTEMPTS } from "./history-stream.js";
import { backoff, isSequenceConflict, storeError } from "./jetstream-errors.js";
import { nextMarks } from "./jetstream-reads.js";
import { createManyInPartitions } from "./jetstream-bulk.js";
import { decodeMeta, encodeMeta } from "./meta-codec.js";
import { OwnedPartitions } from "./owned-partitions.js";
import { ensureSessionStreams, type SessionPartition, type SessionStreamOptions } from "./session-streams.js";

export interface JetStreamSessionOptions extends SessionStreamOptions {
  /** The ordered index behind `sessions.list` (Redis in production), fed by every write. */
  index: SessionIndex;
  /** Bounds of the in-memory tails that spare previews and history loads the stream reads. */
  cache?: TailCacheLimits;
  /** Told when the index missed a write (the index feed repairs it). */
  onIndexError?: (err: unknown) => void;
  /** Told when the watch of an owned partition failed (it starts again by itself). */
  onWatchError?: (err: unknown) => void;
  /** Told of a stored metadata value that does not decode: it reads as no session. */
  onCorruptMeta?: (key: string, problem: string) => void;
}

const MAX_ATTEMPTS = 200;

const gone = (key: string) => new GatewayError("NOT_FOUND", `unknown session: ${key}`);

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
  /** The sessions' histories, and the tails cached of them (history-stream.ts). */
  private readonly history: HistoryStream;
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
    this.history = new HistoryStream(this.js, jsm, partitions, opts.cache, () => this.assertOpen());
    this.owned = new OwnedPartitions({ nc, js: this.js, jsm, partitions, onError: opts.onWatchError, onCorrupt: opts.onCorruptMeta });
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
      subject: (key) => this.history.subject(key),
      kvKey: (key) => this.kvKey(key),
      index: this.opts.index,
    });
  }

  async append(meta: SessionMeta, build: (tip: Tip) => Batch): Promise<{ batch: Batch; meta: SessionMeta }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const last = await this.history.last(meta.key);
      const lastBatch = last ? decodeBatch(last.data) : undefined;
      const batch = build(tipOf(lastBatch, meta.gen));
      // History left by an earlier session under this key (a delete raced an append) is rolled away.
      if (lastBatch && lastBatch.gen !== meta.gen) batch.base = true;
      const marks = last && lastBatch && !batch.base ? nextMarks(last, lastBatch, batch.count) : [];
      const seq = await this.history.publish(meta.key, batch, last?.seq ?? 0, marks);
      if (seq === undefined) {
        await backoff(attempt);
        continue;
      }
      this.history.tails.written(meta.key, last?.seq ?? 0, seq, batch);
      const after = await this.recordHistory(meta, batch, seq);
      return { batch, meta: after };
    }
    throw new GatewayError("UNAVAILABLE", `could not append to session ${meta.key}: too much contention`);
  }

  async replace(meta: SessionMeta, batch: Batch, expected?: Tip): Promise<{ meta: SessionMeta } | false> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const last = await this.history.last(meta.key);
      if (expected && !sameTip(tipOf(last ? decodeBatch(last.data) : undefined, meta.gen), expected)) return false;
      const base = { ...batch, base: true };
      const seq = await this.history.publish(meta.key, base, last?.seq ?? 0, []);
      if (seq !== undefined) {
        this.history.tails.written(meta.key, last?.seq ?? 0, seq, base);
        return { meta: await this.recordHistory(meta, batch, seq) };
      }
      if (expected) return false;
      await backoff(attempt);
    }
    throw new GatewayError("UNAVAILABLE", `could not rewrite session ${meta.key}: too much contention`);
  }

  async tail(meta: SessionMeta, limit: number): Promise<StoredEntry[]> {
    const known = this.owned.read(this.part(meta.key).index, meta.key)?.meta;
    const cached = known && known.gen === meta.gen ? this.history.ownedTail(known, limit) : undefined;
    return cached ?? this.history.tail(meta, limit);
  }

  async preview(key: string, limit: number): Promise<{ meta: SessionMeta; entries: StoredEntry[] } | null> {
    const known = this.owned.read(this.part(key).index, key);
    if (known) {
      if (!known.meta) return null;
      const entries = this.history.ownedTail(known.meta, limit);
      if (entries) return { meta: known.meta, entries };
    }
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      // Both reads at once: one round trip instead of two, as current as reading them in turn.
      const [current, newest] = await Promise.all([this.readMeta(key), this.history.last(key)]);
      if (!current) return null;
      const entries = await this.history.tailFrom(current.meta, newest, limit);
      if (entries) return { meta: current.meta, entries };
    }
    throw movingHistory(key);
  }

  branch(meta: SessionMeta): Promise<{ entries: StoredEntry[]; tip: Tip }> {
    return this.history.branch(meta);
  }

  async delete(key: string): Promise<boolean> {
    if ((await this.readMeta(key)) === null) return false;
    const part = this.part(key);
    const pending = this.owned.begin(part.index);
    let revision: number;
    try {
      // Metadata first: once it is gone the session is gone, even if the purge below never runs.
      revision = await purgeKvKey(this.js, part.bucket, this.kvKey(key));
      this.owned.fill(pending, key, { meta: null, revision });
      await this.history.purge(key);
    } catch (err) {
      throw storeError(err, "delete");
    } finally {
      this.history.tails.forget(key);
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
      const meta = entry.operation === "PUT" ? (decodeMeta(entry.value, (problem) => this.opts.onCorruptMeta?.(key, problem)) ?? null) : null;
      this.owned.fill(pending, key, { meta, revision: entry.revision });
      return meta ? { meta, revision: entry.revision } : null;
    } catch (err) {
      throw storeError(err, "read");
    }
  }

  private part(key: string): SessionPartition {
    return this.history.part(key);
  }

  private kvKey(key: string): string {
    return encodeSubjectToken(key);
  }

  private assertOpen(): void {
    if (this.closed) throw new GatewayError("UNAVAILABLE", "the session store is closed");
  }
}
