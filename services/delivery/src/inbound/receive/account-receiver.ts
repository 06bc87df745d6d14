import { randomUUID } from "node:crypto";
import type { ChannelReceiver } from "@gw/channels";
import { type Logger, retryDelay, sleep } from "@gw/runtime";
import { type HeldLease, type LeaseStore, type LeaseTiming, withLease } from "@gw/store";
import type { StatusBook } from "../../status-book.js";
import { FencedOut, type ReceiverCursors } from "./receiver-cursors.js";
import type { InboundOrigin, InboundSink } from "../store/sink.js";

export interface ReceiverTiming extends LeaseTiming {
  /** How often a replica that does not hold the lease tries for it (jittered by up to a half). */
  acquireEveryMs: number;
  /** Backoff after a failure: full jitter over base x 2^n, capped. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** A run that lasted this long before failing was healthy: the backoff starts over. */
  healthyAfterMs: number;
}

export const DEFAULT_RECEIVER_TIMING: Readonly<ReceiverTiming> = Object.freeze({
  ttlMs: 10_000,
  renewEveryMs: 3_000,
  acquireEveryMs: 2_000,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  healthyAfterMs: 60_000,
});

export interface AccountReceiverDeps {
  origin: InboundOrigin;
  receiver: ChannelReceiver;
  sink: InboundSink;
  leases: LeaseStore;
  cursors: ReceiverCursors;
  status: StatusBook;
  logger: Logger;
  replicaId: string;
  timing: ReceiverTiming;
  random?: () => number;
}

/** The lease and cursor key of one account: one receiver per account across every replica. */
export function receiverKey(origin: InboundOrigin): string {
  return `inbound:receiver:${origin.channelId}:${origin.accountId}`;
}

/**
 * Runs one account's receiver on whichever replica holds its lease: take the lease, raise the
 * cursor's fence, read from the stored cursor, hand each batch to the sink and only then store
 * the batch's cursor. Failures are this account's alone: logged, in channels.status, retried
 * with backoff while the lease is kept. Losing the lease (or the fence) ends the tenure at once.
 */
export class AccountReceiver {
  private readonly key: string;
  private readonly log: Logger;

  constructor(private readonly deps: AccountReceiverDeps) {
    this.key = receiverKey(deps.origin);
    this.log = deps.logger.child({ channel: deps.origin.channelId, account: deps.origin.accountId, replica: deps.replicaId });
  }

  /** Until `stop` fires: wait for the lease, hold it, start over when it is lost. */
  async run(stop: AbortSignal): Promise<void> {
    const { timing } = this.deps;
    while (!stop.aborted) {
      const holder = `${this.deps.replicaId}:${randomUUID()}`;
      const tenure = await withLease(this.deps.leases, this.key, holder, timing, (lease) => this.tenure(lease, stop)).catch((err: unknown) => {
        this.log.warn({ err }, "inbound receiver could not ask for its lease");
        return { held: false as const };
      });
      if (!tenure.held) {
        const wait = timing.acquireEveryMs * (0.5 + (this.deps.random ?? Math.random)());
        await sleep(wait, stop).catch(() => undefined);
      }
    }
  }

  private async tenure(lease: HeldLease, stop: AbortSignal): Promise<void> {
    const signal = AbortSignal.any([stop, lease.lost]);
    this.log.info({ holder: lease.holder }, "inbound receiver holds the lease");
    let fence: number | undefined;
    let cursor: string | undefined;
    let failures = 0;
    try {
      while (!signal.aborted) {
        const startedAt = Date.now();
        try {
          if (fence === undefined) ({ fence, cursor } = await this.deps.cursors.takeOver(this.key, lease.holder));
          cursor = await this.pump(fence, cursor, lease, signal);
          if (signal.aborted) break;
          throw new Error("the receiver stopped on its own");
        } catch (err) {
          if (signal.aborted) break;
          if (err instanceof FencedOut) {
            this.log.warn({ err }, "inbound receiver was fenced out; giving the account up");
            break;
          }
          if (Date.now() - startedAt >= this.deps.timing.healthyAfterMs) failures = 0;
          this.fail(err);
        }
        const { backoffBaseMs: baseMs, backoffMaxMs: capMs } = this.deps.timing;
        const delay = retryDelay(failures++, { baseMs, capMs, jitter: "full", random: this.deps.random });
        await sleep(delay, signal).catch(() => undefined);
      }
    } finally {
      // withLease releases the lease once this returns.
      this.log.info({ reason: describe(lease.lost.reason ?? stop.reason) }, "inbound receiver let its lease go");
    }
  }

  /** Reads batches until the receiver fails or the tenure ends; returns the last stored cursor. */
  private async pump(fence: number, from: string | undefined, lease: HeldLease, signal: AbortSignal): Promise<string | undefined> {
    let cursor = from;
    for await (const batch of this.deps.receiver.receive(cursor, signal)) {
      if (batch.messages.length > 0) await this.deps.sink.accept(this.deps.origin, batch.messages);
      // Stored messages are safe either way; a holder that may have lost its lease stops here.
      if (!lease.held()) throw new FencedOut(`the lease of ${this.key} may have lapsed; not moving the cursor`);
      await this.deps.cursors.advance(this.key, fence, batch.cursor);
      cursor = batch.cursor;
      this.deps.status.success(this.deps.origin.channelId, this.deps.origin.accountId);
    }
    return cursor;
  }

  private fail(err: unknown): void {
    const message = describe(err);
    this.log.warn({ err: message }, "inbound receiver failed; retrying with backoff");
    this.deps.status.failure(this.deps.origin.channelId, this.deps.origin.accountId, `inbound: ${message}`);
  }
}

function describe(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
