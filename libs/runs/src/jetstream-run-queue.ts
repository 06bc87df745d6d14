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
import { outgoingTraceparent, parseTraceparent, RequestMux, TRACEPARENT_HEADER } from "@gw/bus";
import { headers, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { type RunConsumer, type RunHandler, type RunQueue, runInSlot, Slots } from "./run-queue.js";

export interface JetStreamRunQueueOptions {
  /** The bus subject prefix (nats.subjectPrefix); the stream is named after it. */
  prefix: string;
  /** Durable consumer name: runners in one group share the queue. */
  group?: string;
  /**
   * How long a run handed to a runner that has not taken it yet waits before JetStream hands it
   * to another (default 30 s; fixed when the consumer is first created).
   */
  ackWaitMs?: number;
}

const PULL_EXPIRES_MS = 5_000;
/** Unacknowledged this long, a run goes to another runner (JetStream's ack wait). */
const DEFAULT_ACK_WAIT_MS = 30_000;
/** How long a submit waits for the stream's acknowledgement. */
const PUBLISH_TIMEOUT_MS = 5_000;

/**
 * Where the run queue lives in JetStream for a subject prefix: what the runners' autoscaler
 * (KEDA's nats-jetstream trigger in k8s/) must name to read the queue's depth.
 */
export function runQueueNames(prefix: string, group = "runners"): { subject: string; stream: string; consumer: string } {
  return { subject: `${prefix}.runs.queue`, stream: `${prefix.replace(/[^A-Za-z0-9_-]/g, "_")}_runs`, consumer: group };
}

/** The stream's answer to a publish: a PubAck, or an API error (JSON either way). */
function checkPubAck(reply: Msg): void {
  let ack: { stream?: string; error?: { description?: string; code?: number } };
  try {
    ack = JSON.parse(Buffer.from(reply.data).toString("utf8")) as typeof ack;
  } catch {
    throw new Error("the stream's acknowledgement is not JSON");
  }
  if (ack.error !== undefined) throw new Error(ack.error.description ?? `JetStream error ${ack.error.code}`);
  if (typeof ack.stream !== "string") throw new Error("the stream did not acknowledge the run");
}

/**
 * Runs as a JetStream work-queue stream with one durable pull consumer per runner group.
 * A runner asks for at most as many messages as it has free slots, so work waits in the
 * stream (not in a busy runner's buffer) until someone has capacity.
 */
export class JetStreamRunQueue implements RunQueue {
  private readonly js: JetStreamClient;
  /** Publishes with a reply inbox of our own: nats.js's request path builds an Error per call. */
  private readonly requests: RequestMux;
  private readonly subject: string;
  private readonly stream: string;
  private readonly group: string;
  private readonly ackWaitMs: number;
  private ready: Promise<void> | undefined;
  private isReady = false;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    opts: JetStreamRunQueueOptions,
  ) {
    this.js = jetstream(nc);
    this.requests = new RequestMux(nc);
    const names = runQueueNames(opts.prefix, opts.group);
    this.subject = names.subject;
    this.stream = names.stream;
    this.group = names.consumer;
    this.ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
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
        ack_wait: this.ackWaitMs * 1_000_000,
        max_ack_pending: -1,
      });
    })();
    this.ready.then(
      () => {
        this.isReady = true;
      },
      () => {
        this.ready = undefined;
      },
    );
    return this.ready;
  }

  async submit(request: RunRequest): Promise<void> {
    if (this.closed) throw new GatewayError("UNAVAILABLE", "the run queue is closed");
    try {
      // Once the stream exists, the publish leaves in the caller's turn: an edge subscribes to a
      // run's events just before, and both go out in one write to NATS, in that order.
      if (!this.isReady) await this.ensure();
      const msgId = headers();
      msgId.set("Nats-Msg-Id", request.runId);
      const traceparent = outgoingTraceparent();
      if (traceparent !== undefined) msgId.set(TRACEPARENT_HEADER, traceparent);
      const data = encodeMessage(RunRequest, request);
      checkPubAck(await this.requests.request(this.subject, data, msgId, PUBLISH_TIMEOUT_MS));
    } catch (cause) {
      throw new GatewayError("UNAVAILABLE", `cannot queue run ${request.runId}: the run queue is unavailable; try again`, { cause });
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
          let request: RunRequest;
          try {
            request = RunRequest.decode(msg.data);
          } catch {
            msg.term();
            continue;
          }
          // Acknowledged when the runner has taken the run (its claim), so the ack leaves with
          // the run's first event in one write, and a runner that dies before its claim leaves
          // the run to another after the ack wait. Taken means taken: a runner that dies later
          // is caught by the heartbeat, not redelivery. A claim slower than a third of the ack
          // wait is acked anyway, so a live runner's run is never handed out twice.
          const ack = () => {
            clearTimeout(latest);
            msg.ack();
          };
          const latest = setTimeout(ack, this.ackWaitMs / 3);
          const trace = parseTraceparent(msg.headers?.get(TRACEPARENT_HEADER));
          runInSlot(slots, handler, request, { taken: ack, ...(trace ? { trace } : {}) });
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

  async depth(): Promise<number> {
    if (!this.isReady) await this.ensure();
    const jsm = await jetstreamManager(this.nc);
    return (await jsm.consumers.info(this.stream, this.group)).num_pending;
  }

  /** Refuses further submits; the connection belongs to the caller, and consumers stop on their own. */
  async close(): Promise<void> {
    this.closed = true;
    this.requests.close();
  }
}
