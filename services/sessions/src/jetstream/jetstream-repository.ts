import { encodeSubjectToken } from "@gw/bus";
import { GatewayError } from "@gw/contracts";
import {
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  StorageType,
  type StoredMsg,
  type StreamInfo,
} from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { decodeBatch, encodeBatch } from "../batch-codec.js";
import { backoff, isSequenceConflict, storeError } from "./jetstream-errors.js";
import { MetaIndex } from "./jetstream-meta-index.js";
import { readBranch } from "./jetstream-reads.js";
import { withHistory } from "../meta-update.js";
import { type Batch, type SessionMeta, type StoredEntry, sameTip, type Tip, tipOf } from "../model.js";
import type { SessionRepository } from "../repository.js";
import { TailCache, type TailCacheLimits } from "../tail-cache.js";

export interface JetStreamSessionOptions {
  /** The bus subject prefix (nats.subjectPrefix); names the stream, bucket and subjects. */
  subjectPrefix: string;
  /** Stream replicas; 3 in a production cluster (default 1). */
  replicas?: number;
  /** Bounds of the in-memory tails that spare previews the older batches' reads. */
  cache?: TailCacheLimits;
}

/**
 * Each stored batch names the sequences of the (up to) 64 batches before it, newest first, so a
 * preview reads the tail with one request for the newest batch and then the rest in parallel.
 */
export const PREV_HEADER = "Gw-Prev-Seqs";
const BACK_POINTERS = 64;

function backPointers(msg: StoredMsg): number[] {
  const raw = msg.header?.get(PREV_HEADER) ?? "";
  return raw === "" ? [] : raw.split(",").map(Number);
}
const MAX_ATTEMPTS = 200;

const encodeMeta = (meta: SessionMeta) => Buffer.from(JSON.stringify(meta), "utf8");
function decodeMeta(value: Uint8Array): SessionMeta | undefined {
  try {
    return JSON.parse(Buffer.from(value).toString("utf8")) as SessionMeta;
  } catch {
    return undefined;
  }
}
const gone = (key: string) => new GatewayError("NOT_FOUND", `unknown session: ${key}`);

interface Parts {
  nc: NatsConnection;
  jsm: JetStreamManager;
  kv: KV;
  index: MetaIndex;
  stream: string;
  subjectRoot: string;
  direct: boolean;
  cache: TailCacheLimits | undefined;
}

/**
 * Distributed mode: metadata in the KV bucket `<prefix>_sessions`, history in the stream
 * `<prefix>_session_entries` with one subject per session (`<prefix>.sessions.entries.<key b64url>`).
 * Every write to a subject carries Nats-Expected-Last-Subject-Sequence, so of two replicas racing
 * on one session exactly one wins and the other re-reads and retries: no fork, no lost entry.
 * Reset and compaction publish a base batch with `Nats-Rollup: sub`, which drops the older
 * history atomically with the write.
 */
export class JetStreamSessionRepository implements SessionRepository {
  private closed = false;
  /**
   * Tails by the stream sequence of the subject's newest message: a sequence is never reused and
   * its message never changes, so a tail cached for the sequence a read just saw is that history,
   * whichever replica wrote it. Every read still asks the stream for that sequence.
   */
  private readonly tails: TailCache;

  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;
  private readonly kv: KV;
  private readonly index: MetaIndex;
  private readonly stream: string;
  private readonly subjectRoot: string;
  /** Reads go through direct gets (see `open`) rather than the JetStream API. */
  private readonly direct: boolean;

  private constructor(parts: Parts) {
    this.nc = parts.nc;
    this.js = jetstream(parts.nc);
    this.jsm = parts.jsm;
    this.kv = parts.kv;
    this.index = parts.index;
    this.stream = parts.stream;
    this.subjectRoot = parts.subjectRoot;
    this.direct = parts.direct;
    this.tails = new TailCache(parts.cache);
  }

  static async open(nc: NatsConnection, opts: JetStreamSessionOptions): Promise<JetStreamSessionRepository> {
    const name = opts.subjectPrefix.replaceAll(".", "_");
    const stream = `${name}_session_entries`;
    const subjectRoot = `${opts.subjectPrefix}.sessions.entries`;
    const jsm = await jetstreamManager(nc);
    let info: StreamInfo;
    try {
      info = await jsm.streams.info(stream);
    } catch {
      info = await jsm.streams.add({
        name: stream,
        subjects: [`${subjectRoot}.>`],
        storage: StorageType.File,
        num_replicas: opts.replicas ?? 1,
        allow_rollup_hdrs: true,
        allow_direct: true,
        discard: DiscardPolicy.Old,
        max_msgs_per_subject: -1,
      });
    }
    // Direct gets skip the JetStream API's JSON and base64, but every replica of a replicated
    // stream answers them, a lagging follower too: only a single-replica stream reads that way.
    const single = info.config.num_replicas <= 1;
    if (single && !info.config.allow_direct) info = await jsm.streams.update(stream, { allow_direct: true });
    const kv = await new Kvm(nc).create(`${name}_sessions`, {
      history: 1,
      storage: StorageType.File,
      replicas: opts.replicas ?? 1,
    });
    const index = new MetaIndex(kv, decodeMeta);
    await index.start();
    const direct = single && info.config.allow_direct;
    return new JetStreamSessionRepository({ nc, jsm, kv, index, stream, subjectRoot, direct, cache: opts.cache });
  }

  async getMeta(key: string): Promise<SessionMeta | null> {
    return (await this.readMeta(key))?.meta ?? null;
  }

  async createMeta(meta: SessionMeta): Promise<{ meta: SessionMeta; created: boolean }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        await this.kv.create(this.kvKey(meta.key), encodeMeta(meta));
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
      const current = await this.readMeta(key);
      if (!current) return null;
      const next = mutate({ ...current.meta });
      if (next === undefined) return { before: current.meta, after: current.meta };
      try {
        await this.kv.update(this.kvKey(key), encodeMeta(next), current.revision);
        return { before: current.meta, after: next };
      } catch (err) {
        if (!isSequenceConflict(err)) throw storeError(err, "update");
      }
      await backoff(attempt);
    }
    throw new GatewayError("UNAVAILABLE", `could not update session ${key}: too much contention`);
  }

  async listMeta(): Promise<SessionMeta[]> {
    this.assertOpen();
    try {
      return await this.index.all();
    } catch (err) {
      throw storeError(err, "list");
    }
  }

  async append(meta: SessionMeta, build: (tip: Tip) => Batch): Promise<{ batch: Batch; meta: SessionMeta }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const last = await this.last(meta.key);
      const lastBatch = last ? decodeBatch(last.data) : undefined;
      const batch = build(tipOf(lastBatch, meta.gen));
      // History left by an earlier session under this key (a delete raced an append) is rolled away.
      if (lastBatch && lastBatch.gen !== meta.gen) batch.base = true;
      const prevs = last && !batch.base ? [last.seq, ...backPointers(last)].slice(0, BACK_POINTERS) : [];
      const seq = await this.publish(meta.key, batch, last?.seq ?? 0, prevs);
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
    return this.tailFrom(meta, await this.last(meta.key), limit);
  }

  async preview(key: string, limit: number): Promise<{ meta: SessionMeta; entries: StoredEntry[] } | null> {
    this.assertOpen();
    // The index is as current as a read, and an acknowledged append has recorded its batch's
    // sequence in the metadata: a tail cached for that sequence is the session's history, so an
    // unchanged session is answered without reading the stream.
    const indexed = await this.index.get(this.kvKey(key)).catch(() => undefined);
    if (indexed === null) return null;
    if (indexed !== undefined && indexed.historySeq > 0) {
      const cached = this.tails.read(key, indexed.gen, indexed.historySeq, limit);
      if (cached) return { meta: indexed, entries: cached };
    }
    // Both reads at once: one round trip instead of two, as current as reading them in turn.
    const [current, newest] = await Promise.all([this.readMeta(key), this.last(key)]);
    if (!current) return null;
    return { meta: current.meta, entries: await this.tailFrom(current.meta, newest, limit) };
  }

  /** The tail of the history that ends at `newest`, from the cache or walking the back-pointers. */
  private async tailFrom(meta: SessionMeta, newest: StoredMsg | null, limit: number): Promise<StoredEntry[]> {
    if (!newest) return [];
    const cached = this.tails.read(meta.key, meta.gen, newest.seq, limit);
    if (cached) return cached;
    const out: StoredEntry[] = [];
    /** Why the walk stopped: the branch's start, enough entries, or a message that vanished. */
    let stop = "start" as "start" | "limit" | "vanished";
    /** Adds one batch's entries, newest first; false once the walk must stop. */
    const take = (msg: StoredMsg | null): boolean => {
      // Gone: a concurrent reset or compaction rolled it up.
      if (!msg) {
        stop = "vanished";
        return false;
      }
      const batch = decodeBatch(msg.data);
      // Another session's (a delete raced an append): this branch starts after it.
      if (!batch || batch.gen !== meta.gen) return false;
      for (let i = batch.entries.length - 1; i >= 0 && out.length < limit; i--) out.push(batch.entries[i]!);
      if (out.length >= limit) {
        stop = "limit";
        return false;
      }
      return !batch.base;
    };
    if (take(newest)) {
      let pointers = backPointers(newest);
      while (pointers.length > 0) {
        // Every batch holds at least one entry: never fetch more batches than entries still wanted.
        const chunk = pointers.slice(0, limit - out.length);
        const msgs = await Promise.all(chunk.map((seq) => this.get(seq)));
        if (!msgs.every(take)) break;
        pointers = chunk.length < pointers.length ? pointers.slice(chunk.length) : backPointers(msgs.at(-1)!);
      }
    }
    // A vanished message means `newest` is no longer the newest: nothing worth keeping.
    if (stop !== "vanished") this.tails.fill(meta.key, meta.gen, newest.seq, out, stop === "start");
    return out;
  }

  async branch(meta: SessionMeta): Promise<{ entries: StoredEntry[]; tip: Tip }> {
    const last = await this.last(meta.key);
    if (!last) return { entries: [], tip: tipOf(undefined, meta.gen) };
    try {
      const entries = await readBranch(this.js, this.stream, this.subject(meta.key), last.seq, meta.gen);
      return { entries, tip: tipOf(decodeBatch(last.data), meta.gen) };
    } catch (err) {
      throw storeError(err, "read");
    }
  }

  async delete(key: string): Promise<boolean> {
    const existed = (await this.readMeta(key)) !== null;
    if (!existed) return false;
    try {
      // Metadata first: once it is gone the session is gone, even if the purge below never runs.
      await this.kv.purge(this.kvKey(key));
      await this.jsm.streams.purge(this.stream, { filter: this.subject(key) });
    } catch (err) {
      throw storeError(err, "delete");
    } finally {
      this.tails.forget(key);
    }
    return true;
  }

  isHealthy(): boolean {
    return !this.closed && !this.nc.isClosed();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.index.stop();
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

  /** The stream sequence, or undefined when another writer moved the subject first. */
  private async publish(
    key: string,
    batch: Batch,
    expectedLast: number,
    prevs: number[],
  ): Promise<number | undefined> {
    this.assertOpen();
    const hdrs = headers();
    if (prevs.length > 0) hdrs.set(PREV_HEADER, prevs.join(","));
    if (batch.base) hdrs.set("Nats-Rollup", "sub");
    try {
      const ack = await this.js.publish(this.subject(key), encodeBatch(batch), {
        headers: hdrs,
        expect: { lastSubjectSequence: expectedLast },
      });
      return ack.seq;
    } catch (err) {
      if (isSequenceConflict(err)) return undefined;
      throw storeError(err, "append");
    }
  }

  private async last(key: string): Promise<StoredMsg | null> {
    this.assertOpen();
    try {
      return await this.readMessage({ last_by_subj: this.subject(key) });
    } catch (err) {
      throw storeError(err, "read");
    }
  }

  private async get(seq: number): Promise<StoredMsg | null> {
    try {
      return await this.readMessage({ seq });
    } catch (err) {
      throw storeError(err, "read");
    }
  }

  private readMessage(query: { seq: number } | { last_by_subj: string }): Promise<StoredMsg | null> {
    return this.direct
      ? this.jsm.direct.getMessage(this.stream, query)
      : this.jsm.streams.getMessage(this.stream, query);
  }

  private async readMeta(key: string): Promise<{ meta: SessionMeta; revision: number } | null> {
    this.assertOpen();
    try {
      const entry = await this.kv.get(this.kvKey(key));
      if (!entry || entry.operation !== "PUT") return null;
      const meta = decodeMeta(entry.value);
      return meta ? { meta, revision: entry.revision } : null;
    } catch (err) {
      throw storeError(err, "read");
    }
  }

  private subject(key: string): string {
    return `${this.subjectRoot}.${encodeSubjectToken(key)}`;
  }

  private kvKey(key: string): string {
    return encodeSubjectToken(key);
  }

  private assertOpen(): void {
    if (this.closed) throw new GatewayError("UNAVAILABLE", "the session store is closed");
  }
}
