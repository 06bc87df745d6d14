import { encodeMessage, GatewayError, RunRequest } from "@gw/contracts";
import {
  AckPolicy,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { type RunConsumer, type RunHandler, type RunQueue, runInSlot, Slots } from "./run-queue.js";

export interface JetStreamRunQueueOptions {
  /** The bus subject prefix (nats.subjectPrefix); the stream is named after it. */
  prefix: string;
  /** Durable consumer name: runners in one group share the queue. */
  group?: string;
}

const PULL_EXPIRES_MS = 5_000;

/**
 * Runs as a JetStream work-queue stream with one durable pull consumer per runner group.
 * A runner asks for at most as many messages as it has free slots, so work waits in the
 * stream (not in a busy runner's buffer) until someone has capacity.
 */
export class JetStreamRunQueue implements RunQueue {
  private readonly js: JetStreamClient;
  private readonly subject: string;
  private readonly stream: string;
  private readonly group: string;
  private ready: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    opts: JetStreamRunQueueOptions,
  ) {
    this.js = jetstream(nc);
    this.subject = `${opts.prefix}.runs.queue`;
    this.stream = `${opts.prefix.replace(/[^A-Za-z0-9_-]/g, "_")}_runs`;
    this.group = opts.group ?? "runners";
  }

  /** Creates the stream and consumer once (idempotent across processes). */
  private ensure(): Promise<void> {
    this.ready ??= (async () => {
      const jsm = await jetstreamManager(this.nc);
      await jsm.streams
        .add({
          name: this.stream,
          subjects: [this.subject],
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
          // A run nobody took within an hour is stale: its client gave up long ago.
          max_age: 3_600 * 1_000_000_000,
        })
        .catch(async (err: unknown) => {
          // Another process created it first with the same config.
          await jsm.streams.info(this.stream).catch(() => Promise.reject(err));
        });
      await jsm.consumers.add(this.stream, {
        durable_name: this.group,
        ack_policy: AckPolicy.Explicit,
        ack_wait: 30 * 1_000_000_000,
        max_ack_pending: -1,
      });
    })();
    this.ready.catch(() => {
      this.ready = undefined;
    });
    return this.ready;
  }

  async submit(request: RunRequest): Promise<void> {
    if (this.closed) throw new GatewayError("UNAVAILABLE", "the run queue is closed");
    try {
      await this.ensure();
      await this.js.publish(this.subject, encodeMessage(RunRequest, request), { msgID: request.runId });
    } catch (cause) {
      throw new GatewayError("UNAVAILABLE", `cannot queue run ${request.runId}: ${(cause as Error).message}`, { cause });
    }
  }

  consume(handler: RunHandler, opts: { maxConcurrent: number }): RunConsumer {
    const slots = new Slots(opts.maxConcurrent);
    let stopped = false;
    let batch: ConsumerMessages | undefined;
    const loop = async () => {
      await this.ensure();
      const consumer: Consumer = await this.js.consumers.get(this.stream, this.group);
      while (!stopped) {
        await slots.waitFree();
        if (stopped) break;
        batch = await consumer.fetch({ max_messages: slots.free, expires: PULL_EXPIRES_MS });
        for await (const msg of batch) {
          // Taken means taken: a runner that dies later is caught by the heartbeat, not redelivery.
          msg.ack();
          let request: RunRequest;
          try {
            request = RunRequest.decode(msg.data);
          } catch {
            continue;
          }
          runInSlot(slots, handler, request);
        }
      }
    };
    const done = (async () => {
      while (!stopped) {
        try {
          await loop();
        } catch {
          // NATS restarts or a consumer being recreated: try again shortly.
          if (!stopped) await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    })();
    return {
      active: () => slots.active,
      stop: async () => {
        stopped = true;
        batch?.stop();
        slots.wakeAll();
        await done;
        await slots.drained();
      },
    };
  }

  /** Refuses further submits; the connection belongs to the caller, and consumers stop on their own. */
  async close(): Promise<void> {
    this.closed = true;
  }
}
