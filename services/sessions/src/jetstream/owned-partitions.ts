import { setTimeout as sleep } from "node:timers/promises";
import { decodeSubjectToken } from "@gw/bus";
import { type ConsumerMessages, DeliverPolicy, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { type KnownMeta, KnownMetas } from "./known-metas.js";
import { decodeMeta } from "./meta-codec.js";
import type { SessionPartition } from "./session-streams.js";

const RETRY_MS = 500;
const CAUGHT_UP_TIMEOUT_MS = 10_000;

interface Watch {
  partition: number;
  stopped: boolean;
  /** Cached values of the partition may answer: its consumer delivers every write after a known revision. */
  live: boolean;
  /** Counts the times the watch stopped being live: a read begun before then fills nothing. */
  generation: number;
  /** The newest revision delivered (or, right after the start, the bucket's last one then). */
  delivered: number;
  messages?: ConsumerMessages;
}

/** A read from storage under way, which may fill the cache when it returns. */
export interface PendingFill {
  watch: Watch;
  generation: number;
  startedAt: number;
}

export interface OwnedPartitionsDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  partitions: readonly SessionPartition[];
  /** Sessions whose metadata is kept (default known-metas.ts). */
  limit?: number;
  onError?: (err: unknown) => void;
  /** Told of a watched metadata value that does not decode (known as no session). */
  onCorrupt?: (key: string, problem: string) => void;
}

/**
 * The metadata of the sessions in the partitions this replica owns, answered from memory. Each
 * owned partition's KV bucket is watched from its last revision on (an ordered consumer: every
 * write of every replica, in order, with no gap across reconnects), so a cached value is the
 * newest one as soon as the watch has delivered what was written before the read. This replica's
 * own writes are there when acknowledged; another replica's (only while ownership moves, or when
 * no owner answered) arrive with the watch, a moment later. A partition that stops being owned,
 * a watch that fails and a connection that drops take the partition's values out of use at once.
 */
export class OwnedPartitions {
  private readonly metas: KnownMetas;
  private readonly watches = new Map<number, Watch>();
  private closed = false;

  constructor(private readonly deps: OwnedPartitionsDeps) {
    this.metas = new KnownMetas(deps.limit);
    this.followConnection().catch((err: unknown) => deps.onError?.(err));
  }

  /** The partitions owned now (after every ownership change). */
  own(owned: ReadonlySet<number>): void {
    if (this.closed) return;
    for (const [p, watch] of this.watches) if (!owned.has(p)) this.stop(watch);
    for (const p of owned) {
      if (this.watches.has(p) || !this.deps.partitions[p]) continue;
      const watch: Watch = { partition: p, stopped: false, live: false, generation: 0, delivered: 0 };
      this.watches.set(p, watch);
      this.follow(watch).catch((err: unknown) => this.deps.onError?.(err));
    }
  }

  /**
   * The newest metadata of `key` this replica knows, when it may answer without storage: a copy
   * the caller may change.
   */
  read(partition: number, key: string): KnownMeta | undefined {
    if (!this.watches.get(partition)?.live) return undefined;
    const known = this.metas.get(key);
    return known && copyOf(known);
  }

  /** Called before reading `partition`'s storage; undefined when the answer cannot be kept. */
  begin(partition: number): PendingFill | undefined {
    const watch = this.watches.get(partition);
    return watch?.live ? { watch, generation: watch.generation, startedAt: Date.now() } : undefined;
  }

  /**
   * Storage answered `known` (a read, or this replica's acknowledged write) for `pending`. A copy
   * is kept, so the caller may go on changing its object.
   */
  fill(pending: PendingFill | undefined, key: string, known: KnownMeta): void {
    if (!pending) return;
    const { watch } = pending;
    if (!watch.live || watch.generation !== pending.generation) return;
    this.metas.fill(watch.partition, key, copyOf(known), pending.startedAt);
  }

  /** Resolves once every live watch has delivered what its bucket held when called (tests). */
  async caughtUp(): Promise<void> {
    const deadline = Date.now() + CAUGHT_UP_TIMEOUT_MS;
    for (const watch of this.watches.values()) {
      if (!watch.live) continue;
      const { state } = await this.deps.jsm.streams.info(`KV_${this.deps.partitions[watch.partition]!.bucket}`);
      while (watch.live && watch.delivered < state.last_seq) {
        if (Date.now() > deadline) throw new Error(`partition ${watch.partition}'s watch is behind`);
        await sleep(5);
      }
    }
  }

  get cached(): number {
    return this.metas.size;
  }

  close(): void {
    this.closed = true;
    for (const watch of this.watches.values()) this.stop(watch);
  }

  private stop(watch: Watch): void {
    watch.stopped = true;
    this.setLive(watch, false);
    watch.messages?.stop();
    this.watches.delete(watch.partition);
  }

  private setLive(watch: Watch, live: boolean): void {
    if (watch.live && !live) {
      watch.generation++;
      this.metas.dropPartition(watch.partition);
    }
    watch.live = live;
  }

  private async follow(watch: Watch): Promise<void> {
    const { bucket } = this.deps.partitions[watch.partition]!;
    const stream = `KV_${bucket}`;
    const prefix = `$KV.${bucket}.`;
    /** Only the first failure of a run of them is reported (NATS away: every attempt times out). */
    let failing = false;
    while (!watch.stopped) {
      try {
        const { state } = await this.deps.jsm.streams.info(stream);
        // The bucket's stream holds only its keys' subjects: no filter (2.9 takes no filter list).
        const consumer = await this.deps.js.consumers.get(stream, {
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: state.last_seq + 1,
        });
        const messages = await consumer.consume();
        watch.messages = messages;
        if (watch.stopped) messages.stop();
        // Every write after last_seq will be delivered, so any read from here on may fill.
        watch.delivered = state.last_seq;
        this.setLive(watch, !watch.stopped && !this.deps.nc.isClosed());
        failing = false;
        for await (const msg of messages) {
          const operation = msg.headers?.get("KV-Operation") ?? "";
          const key = decodeSubjectToken(msg.subject.slice(prefix.length));
          const put = operation === "" || operation === "PUT";
          const meta = put ? (decodeMeta(msg.data, (problem) => this.deps.onCorrupt?.(key, problem)) ?? null) : null;
          this.metas.watchedWrite(watch.partition, key, { meta, revision: msg.seq });
          watch.delivered = msg.seq;
        }
      } catch (err) {
        if (!watch.stopped && !failing) this.deps.onError?.(err);
        failing = true;
      } finally {
        watch.messages?.stop();
        this.setLive(watch, false);
      }
      if (!watch.stopped) await sleep(RETRY_MS);
    }
  }

  /**
   * While the connection is down another replica may write unseen: nothing cached answers, and
   * each watch starts again from its bucket's last revision once the connection is back.
   */
  private async followConnection(): Promise<void> {
    for await (const status of this.deps.nc.status()) {
      if (status.type !== "disconnect") continue;
      for (const watch of this.watches.values()) {
        this.setLive(watch, false);
        watch.messages?.stop();
      }
    }
  }
}

/** A KnownMeta whose metadata object is its own (callers keep changing theirs). */
function copyOf(known: KnownMeta): KnownMeta {
  return { meta: known.meta && { ...known.meta }, revision: known.revision };
}
