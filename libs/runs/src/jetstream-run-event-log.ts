import { randomUUID } from "node:crypto";
import { createSubjects, type Subjects } from "@gw/bus";
import { type ClientEvent, decodeClientEvent } from "@gw/contracts";
import { createRacing } from "@gw/store";
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { inSeqOrder, type RunEventLog, type RunEventRetention } from "./run-event-log.js";

/** A read takes the run's events this many at a time. */
const BATCH = 512;
const FETCH_EXPIRES_MS = 5_000;
/** A reader's consumer outlives a reader that died this long (JetStream removes it). */
const CONSUMER_IDLE_NS = 30_000 * 1_000_000;

export interface RunEventStreamOptions {
  /** The bus subject prefix (nats.subjectPrefix); the streams are named after it. */
  prefix: string;
  /** Streams the events are spread over by a hash of the run id (nats.runEventPartitions, default 1). */
  partitions?: number;
  /** What the streams keep in all: each of N streams keeps maxBytes / N. */
  retention: RunEventRetention;
  /** Copies of each stream (nats.replicas): 3 on a 3-node cluster (default 1). */
  replicas?: number;
}

/** One stream of the run event log: its name, the subjects it captures, and its readers' barrier subject. */
export interface RunEventStreamNames {
  stream: string;
  subjects: string[];
  barrier: string;
}

/** The bus subjects of a layout (createSubjects with the partition count): the one map from a run to its partition. */
function layoutSubjects(opts: { prefix: string; partitions?: number }): Subjects {
  return createSubjects(opts.prefix, { runEventPartitions: opts.partitions ?? 1 });
}

/**
 * Where partition `partition` of the run event log lives in JetStream: the stream, the subjects it
 * captures (every event of the runs hashed to it: a reader's filter must be a subset of one of
 * them, so the `final` records come along, one per run, and reads skip them), and the readers'
 * barrier subject. One partition is the stream `<prefix>_run_events` on `<prefix>.run.>`; with N
 * the streams `<prefix>_run_events_<p>` on `<prefix>.runp.<p>.>`, which overlap neither each other
 * nor the one-partition stream, so a deployment can go from one layout to the other.
 */
function partitionStreamNames(prefix: string, subjects: Subjects, partition: number): RunEventStreamNames {
  const base = `${prefix.replace(/[^A-Za-z0-9_-]/g, "_")}_run_events`;
  const one = subjects.runEventPartitions === 1;
  return {
    stream: one ? base : `${base}_${partition}`,
    subjects: [subjects.runEventPartitionSubjects(partition)],
    barrier: one ? `${prefix}.runlog.barrier` : `${prefix}.runlog.barrier.${partition}`,
  };
}

/** Every stream of the run event log, partition 0 first. */
export function runEventStreamNames(opts: { prefix: string; partitions?: number }): RunEventStreamNames[] {
  const subjects = layoutSubjects(opts);
  return Array.from({ length: subjects.runEventPartitions }, (_, p) => partitionStreamNames(opts.prefix, subjects, p));
}

/** Each stream's configuration: limits-based, the oldest events going first. */
export function runEventStreamConfigs(opts: RunEventStreamOptions): (Partial<StreamConfig> & { name: string })[] {
  const streams = runEventStreamNames(opts);
  return streams.map((names) => ({
    name: names.stream,
    subjects: [...names.subjects, names.barrier],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: opts.retention.maxAgeMs * 1_000_000,
    max_bytes: Math.max(1, Math.floor(opts.retention.maxBytes / streams.length)),
    num_replicas: opts.replicas ?? 1,
  }));
}

/**
 * Creates the run event streams, or brings existing ones' limits to the configured ones
 * (idempotent across processes). Runners call it before they serve, so no run's events are
 * published before a stream captures them; edges before they read.
 */
export async function ensureRunEventStream(nc: NatsConnection, opts: RunEventStreamOptions): Promise<void> {
  const jsm = await jetstreamManager(nc);
  // A busy cluster may leave a create unanswered: tried again, as creates race (createRacing).
  await Promise.all(runEventStreamConfigs(opts).map((config) => createRacing(() => ensureStream(jsm, config))));
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  await jsm.streams.add(config).catch(async (err: unknown) => {
    const info = await jsm.streams.info(config.name).catch(() => Promise.reject(err));
    const { max_age, max_bytes, num_replicas } = config;
    if (info.config.max_age !== max_age || info.config.max_bytes !== max_bytes || info.config.num_replicas !== num_replicas) {
      await jsm.streams.update(config.name, { ...info.config, max_age, max_bytes, num_replicas });
    }
  });
}

/**
 * The distributed run event log: reads a run's events back from the stream. A read first
 * publishes a barrier message through JetStream and waits for its acknowledgement: the stream
 * stores what it is given in order, so every event the server had taken in before the barrier
 * (in particular, before the reader's live subscription) is stored by then.
 */
export class JetStreamRunEventLog implements RunEventLog {
  private readonly js: JetStreamClient;
  private jsm: Promise<JetStreamManager> | undefined;
  private readonly streams: RunEventStreamNames[];
  private readonly subjects: Subjects;

  constructor(
    private readonly nc: NatsConnection,
    opts: { prefix: string; partitions?: number },
  ) {
    this.js = jetstream(nc);
    this.streams = runEventStreamNames(opts);
    this.subjects = layoutSubjects(opts);
  }

  /** Reads the run's events from its partition's stream, after that stream's barrier. */
  async read(runId: string): Promise<ClientEvent[]> {
    const names = this.streams[this.subjects.runEventPartition(runId)]!;
    await this.js.publish(names.barrier, new Uint8Array(0));
    this.jsm ??= jetstreamManager(this.nc);
    const jsm = await this.jsm;
    const name = `runlog_${randomUUID().replaceAll("-", "")}`;
    const info = await jsm.consumers.add(names.stream, {
      name,
      filter_subject: this.subjects.runEvents({ runId }),
      deliver_policy: DeliverPolicy.All,
      ack_policy: AckPolicy.None,
      mem_storage: true,
      inactive_threshold: CONSUMER_IDLE_NS,
    });
    try {
      const events: ClientEvent[] = [];
      let left = info.num_pending;
      const consumer = await this.js.consumers.get(names.stream, name);
      while (left > 0) {
        const batch = await consumer.fetch({ max_messages: Math.min(left, BATCH), expires: FETCH_EXPIRES_MS });
        let got = 0;
        for await (const msg of batch) {
          got += 1;
          if (!msg.subject.endsWith(".final")) events.push(decodeClientEvent(msg.data));
          left = msg.info.pending;
          if (left === 0) break;
        }
        // Events can expire while they are read: what is left is then fewer than counted.
        if (got === 0) break;
      }
      return inSeqOrder(events);
    } finally {
      await jsm.consumers.delete(names.stream, name).catch(() => undefined);
    }
  }

  isHealthy(): boolean {
    return !this.nc.isClosed();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
