import { encodeMessage, GatewayError, isGatewayError, RunRequest } from "@gw/contracts";
import { AckPolicy, type JetStreamManager, jetstreamManager, RetentionPolicy, type StreamConfig, StorageType } from "@nats-io/jetstream";
import { readTraceHeaders, RequestMux, writeTraceHeaders } from "@gw/bus";
import { type BackoffPolicy, retryDelay, sleep } from "@gw/runtime";
import { headers, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/nats-core";
import { LongPull } from "./jetstream-pull.js";
import { admittedSlots, type ConsumeOptions, type RunConsumer, type RunHandler, type RunQueue, runInSlot, type Slots } from "./run-queue.js";
import { decodeRunRequest } from "./run-request.js";

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
  /** How long one pull request of a runner waits on the server before it is renewed (default 10 s). */
  pullExpiresMs?: number;
  /** Copies of the stream (nats.replicas): 3 on a 3-node cluster (default 1). */
  replicas?: number;
}

/** A queued run nobody took within an hour is stale: its client gave up long ago. */
const MAX_AGE_MS = 3_600_000;
/** Retry pause after the consumer was lost (NATS away, the stream or consumer deleted). */
const RECOVER_MS = 500;
/** Unacknowledged this long, a run goes to another runner (JetStream's ack wait). */
const DEFAULT_ACK_WAIT_MS = 30_000;
/** How long a submit waits for the stream's acknowledgement. */
const PUBLISH_TIMEOUT_MS = 5_000;
/** Between publishes nobody answered: 25 ms doubling to 500 ms. */
const PUBLISH_RETRY: BackoffPolicy = { baseMs: 25, capMs: 500, jitter: "none" };

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
  if (ack.error !== undefined) {
    const description = ack.error.description ?? `JetStream error ${ack.error.code}`;
    // 503: JetStream is there but cannot store right now (no quorum yet); worth another try.
    throw ack.error.code === 503 ? new GatewayError("UNAVAILABLE", description) : new Error(description);
  }
  if (typeof ack.stream !== "string") throw new Error("the stream did not acknowledge the run");
}

/**
 * Runs as a JetStream work-queue stream with one durable pull consumer per runner group.
 * A runner asks for at most as many messages as it has free slots, so work waits in the
 * stream (not in a busy runner's buffer) until someone has capacity.
 */
export class JetStreamRunQueue implements RunQueue {
  /** Publishes with a reply inbox of our own: nats.js's request path builds an Error per call. */
  private readonly requests: RequestMux;
  private readonly subject: string;
  private readonly stream: string;
  private readonly group: string;
  private readonly ackWaitMs: number;
  private readonly pullExpiresMs: number | undefined;
  private readonly replicas: number;
  private ready: Promise<void> | undefined;
  private isReady = false;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    opts: JetStreamRunQueueOptions,
  ) {
    this.requests = new RequestMux(nc);
    const names = runQueueNames(opts.prefix, opts.group);
    this.subject = names.subject;
    this.stream = names.stream;
    this.group = names.consumer;
    this.ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    this.pullExpiresMs = opts.pullExpiresMs;
    this.replicas = opts.replicas ?? 1;
  }

  /** The queue of a deployment: its subject prefix and replica count from the `nats` config. */
  static forConfig(nc: NatsConnection, nats: { subjectPrefix: string; replicas: number }): JetStreamRunQueue {
    return new JetStreamRunQueue(nc, { prefix: nats.subjectPrefix, replicas: nats.replicas });
  }

  /** Creates the stream, or brings an existing one to the configured replica count. */
  private async ensureStream(jsm: JetStreamManager): Promise<void> {
    const config: Partial<StreamConfig> & { name: string } = {
      name: this.stream,
      subjects: [this.subject],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: this.replicas,
      max_age: MAX_AGE_MS * 1_000_000,
    };
    const info = await jsm.streams.info(this.stream).catch(() => undefined);
    if (info === undefined) {
      // Another process may create it at the same moment with the same config: then it exists.
      await jsm.streams.add(config).catch(async (err: unknown) => {
        await jsm.streams.info(this.stream).catch(() => Promise.reject(err));
      });
    } else if (info.config.num_replicas !== this.replicas) {
      await jsm.streams.update(this.stream, { ...info.config, num_replicas: this.replicas });
    }
  }

  /** Creates the stream and consumer once (idempotent across processes). */
  private ensure(): Promise<void> {
    this.ready ??= (async () => {
      const jsm = await jetstreamManager(this.nc);
      await this.ensureStream(jsm);
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
      writeTraceHeaders(msgId);
      await this.publish(encodeMessage(RunRequest, request), msgId);
    } catch (cause) {
      throw new GatewayError("UNAVAILABLE", `cannot queue run ${request.runId}: the run queue is unavailable; try again`, { cause });
    }
  }

  /**
   * Publishes until the stream acknowledges, within PUBLISH_TIMEOUT_MS. Nobody answering (a
   * stream just created whose interest has not reached this node yet, a leader being elected after
   * a node died) is retried: the Nats-Msg-Id header makes a repeat land once.
   */
  private async publish(data: Uint8Array, hdrs: MsgHdrs): Promise<void> {
    const deadline = Date.now() + PUBLISH_TIMEOUT_MS;
    for (let attempt = 0; ; attempt++) {
      const pause = retryDelay(attempt, PUBLISH_RETRY);
      try {
        checkPubAck(await this.requests.request(this.subject, data, hdrs, Math.max(1, deadline - Date.now())));
        return;
      } catch (err) {
        const retryable = isGatewayError(err) && err.code === "UNAVAILABLE";
        if (!retryable || this.closed || Date.now() + pause >= deadline) throw err;
        await sleep(pause);
      }
    }
  }

  consume(handler: RunHandler, opts: ConsumeOptions): RunConsumer {
    // Each admission window may raise the limit: ask for what it lets in.
    let pulling = false;
    const { slots, stop: stopAdmission } = admittedSlots(opts, () => {
      if (pulling) pull.refill();
    });
    let stopped = false;
    let recovering: NodeJS.Timeout | undefined;
    // Asks for as many runs as there are free slots, through one inbox for the consumer's life.
    const pull = new LongPull(this.nc, {
      stream: this.stream,
      consumer: this.group,
      capacity: () => (stopped ? 0 : slots.free),
      onMessage: (msg) => this.take(msg, slots, handler, () => pull.refill()),
      onLost: () => recover(),
      ...(this.pullExpiresMs === undefined ? {} : { expiresMs: this.pullExpiresMs }),
    });
    const recover = () => {
      if (stopped || recovering !== undefined) return;
      this.ready = undefined;
      this.isReady = false;
      recovering = setTimeout(() => {
        recovering = undefined;
        this.ensure().then(
          () => pull.reset(),
          () => recover(),
        );
      }, RECOVER_MS);
    };
    void this.ensure().then(
      () => {
        pulling = true;
        pull.refill();
      },
      () => recover(),
    );
    return {
      active: () => slots.active,
      admitted: () => slots.admitted,
      stop: async () => {
        stopped = true;
        clearTimeout(recovering);
        stopAdmission();
        pull.stop();
        await slots.drained();
      },
    };
  }

  /** Acks, naks or terms a delivery; on a closed connection there is nobody left to tell. */
  private answer(reply: string, verdict: string): void {
    if (!this.nc.isClosed()) this.nc.publish(reply, verdict);
  }

  /** Starts a delivered run in a free slot; one beyond capacity goes back to the queue at once. */
  private take(msg: Msg, slots: Slots, handler: RunHandler, freed: () => void): void {
    if (msg.reply === undefined) return;
    const reply = msg.reply;
    let request: RunRequest;
    try {
      request = decodeRunRequest(msg.data);
    } catch {
      this.answer(reply, "+TERM");
      return;
    }
    if (slots.room <= 0) {
      // Delivered for a request the server kept after we had given it up: another runner takes it.
      this.answer(reply, "-NAK");
      return;
    }
    // Acknowledged when the runner has taken the run (its claim), so the ack leaves with the
    // run's first event in one write, and a runner that dies before its claim leaves the run to
    // another after the ack wait. Taken means taken: a runner that dies later is caught by the
    // heartbeat, not redelivery. A claim slower than a third of the ack wait is acked anyway, so
    // a live runner's run is never handed out twice.
    const ack = () => {
      clearTimeout(latest);
      this.answer(reply, "+ACK");
    };
    const latest = setTimeout(ack, this.ackWaitMs / 3);
    const trace = readTraceHeaders(msg.headers);
    runInSlot(slots, handler, request, { taken: ack, released: freed, ...(trace ? { trace } : {}) });
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
