import { randomUUID } from "node:crypto";
import { createSubjects, type Subjects } from "@gw/bus";
import { type ClientEvent, decodeClientEvent } from "@gw/contracts";
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
  /** The bus subject prefix (nats.subjectPrefix); the stream is named after it. */
  prefix: string;
  retention: RunEventRetention;
  /** Copies of the stream (nats.replicas): 3 on a 3-node cluster (default 1). */
  replicas?: number;
}

/**
 * Where the run event log lives in JetStream for a subject prefix: the stream, the subjects it
 * captures (every run's events: a reader's filter must be a subset of one of them, so the `final`
 * records come along, one per run, and reads skip them), and the readers' barrier subject.
 */
export function runEventStreamNames(prefix: string): { stream: string; subjects: string[]; barrier: string } {
  return {
    stream: `${prefix.replace(/[^A-Za-z0-9_-]/g, "_")}_run_events`,
    subjects: [createSubjects(prefix).runEvents({})],
    barrier: `${prefix}.runlog.barrier`,
  };
}

/** The stream's configuration: limits-based, the oldest events going first. */
export function runEventStreamConfig(opts: RunEventStreamOptions): Partial<StreamConfig> & { name: string } {
  const names = runEventStreamNames(opts.prefix);
  return {
    name: names.stream,
    subjects: [...names.subjects, names.barrier],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: opts.retention.maxAgeMs * 1_000_000,
    max_bytes: opts.retention.maxBytes,
    num_replicas: opts.replicas ?? 1,
  };
}

/**
 * Creates the run event stream, or brings an existing one's limits to the configured ones
 * (idempotent across processes). Runners call it before they serve, so no run's events are
 * published before the stream captures them; edges before they read.
 */
export async function ensureRunEventStream(nc: NatsConnection, opts: RunEventStreamOptions): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const config = runEventStreamConfig(opts);
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
  private readonly names: ReturnType<typeof runEventStreamNames>;
  private readonly subjects: Subjects;

  constructor(
    private readonly nc: NatsConnection,
    opts: { prefix: string },
  ) {
    this.js = jetstream(nc);
    this.names = runEventStreamNames(opts.prefix);
    this.subjects = createSubjects(opts.prefix);
  }

  async read(runId: string): Promise<ClientEvent[]> {
    await this.js.publish(this.names.barrier, new Uint8Array(0));
    this.jsm ??= jetstreamManager(this.nc);
    const jsm = await this.jsm;
    const name = `runlog_${randomUUID().replaceAll("-", "")}`;
    const info = await jsm.consumers.add(this.names.stream, {
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
      const consumer = await this.js.consumers.get(this.names.stream, name);
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
      await jsm.consumers.delete(this.names.stream, name).catch(() => undefined);
    }
  }

  isHealthy(): boolean {
    return !this.nc.isClosed();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
