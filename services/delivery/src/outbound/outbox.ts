import { createHash, randomUUID } from "node:crypto";
import { DeliverySendRequest, type ErrorCodeName, isGatewayError, readStoredJson } from "@gw/contracts";
import { type BackoffPolicy, type Logger, retryDelay } from "@gw/runtime";
import { type DurableKv, type FastStore, type HeldLease, leaseTiming, withLease } from "@gw/store";
import { z } from "zod";
import type { Dispatcher } from "./dispatcher.js";

export interface OutboxOptions {
  /** This process, as the holder of a job's lease. */
  replicaId: string;
  /** A job is retried this long after it was accepted, then dropped (logged, in channels.status). */
  retryForMs: number;
  /** How long a dead holder's lease blocks its job; a live holder renews it every third of this. */
  leaseMs: number;
  /** How often every replica looks for jobs nobody holds (after a crash, or retries due). */
  scanEveryMs?: number;
}

const JobSchema = z.object({
  /** DeliverySendRequest, protobuf as base64. */
  request: z.base64(),
  origin: z.string(),
  acceptedAt: z.number(),
  attempts: z.number().int().nonnegative(),
  nextAttemptAt: z.number(),
  lastError: z.string().optional(),
});
type Job = z.infer<typeof JobSchema>;

/** A stored job and the send it asks for, or why it cannot be one. */
function decodeJob(value: Uint8Array): { job: Job; request: DeliverySendRequest } | { problem: string } {
  const stored = readStoredJson(value, JobSchema);
  if (!stored.ok) return stored;
  try {
    return { job: stored.value, request: DeliverySendRequest.decode(Buffer.from(stored.value.request, "base64")) };
  } catch (err) {
    return { problem: `its request is not a DeliverySendRequest (${(err as Error).message})` };
  }
}

/**
 * A job that failed for a transient reason waits 1 s, doubling to at most 5 min, before its next
 * try; no jitter: the job's next attempt time is stored, and any replica's scan picks it up then.
 */
const JOB_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 300_000, jitter: "none" };

/** Failures that another try can fix: the platform was busy, down or slow. */
export function isTransient(err: unknown): boolean {
  if (!isGatewayError(err)) return true;
  const transient: ErrorCodeName[] = ["UNAVAILABLE", "TIMEOUT", "RATE_LIMITED", "INTERNAL"];
  if (transient.includes(err.code)) return true;
  const reason = err.details?.reason;
  return err.code === "DELIVERY_FAILED" && (reason === "rate_limited" || reason === "unavailable");
}

/**
 * The durable queue of agents' answers (`deliver: true`): a job is written to the durable
 * store (JetStream KV in distributed mode, files in embedded mode) before `enqueue` answers,
 * and removed only after the platform took it, so a delivery restart loses none. One replica
 * at a time works a job (a lease in the FastStore); every replica scans for jobs whose holder
 * died. Sends go through the Dispatcher with the job's idempotency key, so a job worked twice
 * sends every finished part once; a part whose platform call was in flight when its worker
 * died is sent again (at least once: docs/decisions.md, Delivery).
 */
export class Outbox {
  private timer: NodeJS.Timeout | undefined;
  private readonly working = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly deps: {
      kv: DurableKv;
      store: FastStore;
      dispatcher: Pick<Dispatcher, "send">;
      logger: Logger;
    },
    private readonly opts: OutboxOptions,
  ) {}

  static jobId(idempotencyKey: string): string {
    return createHash("sha256").update(idempotencyKey).digest("base64url");
  }

  start(): void {
    const every = this.opts.scanEveryMs ?? 2_000;
    this.timer = setInterval(() => this.scanNow(), every);
    this.timer.unref();
    this.scanNow();
  }

  private scanNow(): void {
    this.scan().catch((err: unknown) => this.deps.logger.warn({ err }, "the outbox scan failed; the next one retries"));
  }

  /** Accepts a job durably; a second job with the same idempotency key is the first one. */
  async enqueue(request: DeliverySendRequest, origin: string): Promise<{ jobId: string; duplicate: boolean }> {
    const jobId = Outbox.jobId(request.idempotencyKey);
    const job: Job = {
      request: Buffer.from(DeliverySendRequest.encode(request).finish()).toString("base64"),
      origin,
      acceptedAt: Date.now(),
      attempts: 0,
      nextAttemptAt: 0,
    };
    try {
      await this.deps.kv.create(jobId, Buffer.from(JSON.stringify(job)));
    } catch (err) {
      if (isGatewayError(err) && err.code === "CONFLICT") return { jobId, duplicate: true };
      throw err;
    }
    this.work(jobId);
    return { jobId, duplicate: false };
  }

  /** Jobs waiting (accepted and not yet delivered or dropped). */
  async pending(): Promise<number> {
    return (await this.deps.kv.keys()).length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }

  private async scan(): Promise<void> {
    if (this.stopped) return;
    let ids: string[];
    try {
      ids = await this.deps.kv.keys();
    } catch (err) {
      this.deps.logger.warn({ err }, "cannot list the outbox");
      return;
    }
    for (const id of ids) this.work(id);
  }

  private work(jobId: string): void {
    if (this.stopped || this.working.has(jobId)) return;
    this.working.add(jobId);
    const run = this.attempt(jobId)
      .catch((err: unknown) => this.deps.logger.error({ err, jobId }, "outbox job failed unexpectedly"))
      .finally(() => {
        this.working.delete(jobId);
        this.inFlight.delete(run);
      });
    this.inFlight.add(run);
  }

  private async attempt(jobId: string): Promise<void> {
    // One tenure, one holder: a restarted replica with the same id never takes its predecessor's lease for its own.
    const holder = `${this.opts.replicaId}:${randomUUID()}`;
    const timing = leaseTiming(this.opts.leaseMs);
    await withLease(this.deps.store.leases, `delivery:outbox:${jobId}`, holder, timing, (lease) => this.deliver(jobId, lease));
  }

  /** Works the job while this replica holds its lease; nothing is sent or written once the lease may be gone. */
  private async deliver(jobId: string, lease: HeldLease): Promise<void> {
    const entry = await this.deps.kv.get(jobId);
    if (entry === null || !lease.held()) return;
    const decoded = decodeJob(entry.value);
    if ("problem" in decoded) {
      // It can never be sent, and every scan would find it again: it goes (logged; its text is not).
      this.deps.logger.error({ jobId, problem: decoded.problem, bytes: entry.value.length }, "a corrupt outbox job is dropped");
      await this.deps.kv.delete(jobId);
      return;
    }
    const { job, request } = decoded;
    if (job.nextAttemptAt > Date.now()) return;
    try {
      const receipt = await this.deps.dispatcher.send(request);
      await this.deps.kv.delete(jobId);
      this.deps.logger.info(
        { jobId, origin: job.origin, channel: receipt.channel, messageIds: receipt.messageIds },
        "outbox job delivered",
      );
    } catch (err) {
      // The new holder tries again; the job's revision would refuse this write anyway.
      if (lease.held()) await this.failed(jobId, job, entry.revision, err);
    }
  }

  private async failed(jobId: string, job: Job, revision: number, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    const attempts = job.attempts + 1;
    if (isTransient(err) && Date.now() - job.acceptedAt < this.opts.retryForMs) {
      const backoff = retryDelay(attempts - 1, JOB_BACKOFF);
      const next: Job = { ...job, attempts, nextAttemptAt: Date.now() + backoff, lastError: message };
      await this.deps.kv.update(jobId, Buffer.from(JSON.stringify(next)), revision);
      this.deps.logger.warn({ jobId, origin: job.origin, attempts, retryInMs: backoff, err: message }, "outbox job will be retried");
      return;
    }
    await this.deps.kv.delete(jobId);
    const code = isGatewayError(err) ? err.code : "INTERNAL";
    this.deps.logger.error({ jobId, origin: job.origin, attempts, code, err: message }, "outbox job dropped: it cannot be delivered");
  }
}

