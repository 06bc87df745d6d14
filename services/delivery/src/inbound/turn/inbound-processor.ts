import { type BackoffPolicy, type Logger, retryDelay } from "@gw/runtime";
import { randomUUID } from "node:crypto";
import { type FastStore, type HeldLease, leaseTiming, withLease } from "@gw/store";
import type { StatusBook } from "../../status-book.js";
import type { AnsweredEvents } from "../store/answered-events.js";
import { eventKeyOf } from "../store/conversation.js";
import type { InboundStore, QueueRead } from "../store/inbound-store.js";
import type { InboundTurn, TurnOutcome } from "./inbound-turn.js";
import { endTurn, type PlannedTurn, planTurn, runningTurn } from "./pending-queue.js";

export interface InboundProcessorOptions {
  /** This process, as the holder of a session's lease. */
  replicaId: string;
  /** How long a dead holder's lease blocks its session; a live holder renews it every third. */
  leaseMs: number;
  /** A message whose turn keeps failing on the gateway's side is dropped this long after it arrived. */
  retryForMs: number;
  /** How often every replica looks for sessions nobody works on (after a crash, or retries due). */
  scanEveryMs?: number;
  /** Sessions worked at once by this replica; more wait for the next scan. */
  maxSessions?: number;
}

export interface InboundProcessorDeps {
  store: InboundStore;
  answered: AnsweredEvents;
  /** Takes one turn (InboundTurn); throws when the gateway's side failed. `giveUp` never throws. */
  turn: Pick<InboundTurn, "take" | "giveUp" | "queueOf">;
  fastStore: FastStore;
  status: StatusBook;
  logger: Logger;
}

/** Backoff of a session whose turn failed on the gateway's side: doubling from 1 s to 1 min. */
const SESSION_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 60_000, jitter: "none" };

/**
 * Works the stored inbound messages, one session at a time per session across every replica
 * (a lease in the FastStore), each session's turns in arrival order: a message that arrives
 * while its session's run is going waits for the next turn (its own, or one collecting every
 * message waiting, by the queue mode: pending-queue.ts), none is dropped, and the answers go out
 * in order. The replica that stores a message starts its session at once; the lease holder reads
 * the session's queue again after every turn, and once more after it lets the lease go, so a
 * message stored by another replica meanwhile is not left behind. Every replica also scans the
 * store (`scanEveryMs`), which resumes the sessions of a replica that died once its lease lapses.
 */
export class InboundProcessor {
  private readonly local = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly failures = new Map<string, { count: number; until: number }>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly deps: InboundProcessorDeps,
    private readonly opts: InboundProcessorOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.scanNow(), this.opts.scanEveryMs ?? 5_000);
    this.timer.unref();
    this.scanNow();
  }

  private scanNow(): void {
    this.scan().catch((err: unknown) => this.deps.logger.warn({ err }, "the inbound scan failed; the next one retries"));
  }

  /**
   * Takes no further message. A turn still waiting for its run gets `graceMs` to end, not the
   * run's whole timeout: one left behind lets its lease lapse, and whichever replica resumes the
   * session follows the same run (its id is the event's) and sends the answer once.
   */
  async stop(graceMs = 3_000): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.allSettled([...this.local.values()]), grace]);
    clearTimeout(timer);
  }

  /** Starts working the session's queue here unless it is already being worked (here or elsewhere). */
  kick(key: string): void {
    if (this.stopped) return;
    if (this.local.has(key)) {
      this.again.add(key);
      return;
    }
    if (this.local.size >= (this.opts.maxSessions ?? 500)) return;
    const failed = this.failures.get(key);
    if (failed !== undefined && failed.until > Date.now()) return;
    const work = this.work(key)
      .catch((err: unknown) => this.deps.logger.error({ err, key }, "inbound session worker failed unexpectedly"))
      .finally(() => {
        this.local.delete(key);
        if (this.again.delete(key)) this.kick(key);
      });
    this.local.set(key, work);
  }

  /** Sessions being worked by this replica (for tests and metrics). */
  busy(): number {
    return this.local.size;
  }

  private async scan(): Promise<void> {
    if (this.stopped) return;
    let keys: string[];
    try {
      keys = await this.deps.store.keys();
    } catch (err) {
      this.deps.logger.warn({ err }, "cannot list the inbound store");
      return;
    }
    for (const key of keys) this.kick(key);
  }

  private async work(key: string): Promise<void> {
    // One tenure, one holder: a restarted replica with the same id never takes its predecessor's lease for its own.
    const holder = `${this.opts.replicaId}:${randomUUID()}`;
    const timing = leaseTiming(this.opts.leaseMs);
    const worked = await withLease(this.deps.fastStore.leases, `delivery:inbound:${key}`, holder, timing, (lease) => this.drain(key, lease));
    // A message stored while this replica held the lease, by a replica whose kick found it taken.
    if (worked.held && worked.value && !this.stopped && ((await this.deps.store.read(key))?.queue.items.length ?? 0) > 0) this.again.add(key);
  }

  /**
   * Takes the session's turns in order while the lease is ours (a turn never starts once it may
   * be gone); true when the queue ran out, false when the session waits or the lease went.
   */
  private async drain(key: string, lease: HeldLease): Promise<boolean> {
    while (!this.stopped) {
      const read = await this.deps.store.read(key);
      if (read === null || read.queue.items.length === 0) return true;
      if (!lease.held()) return false;
      const next = await this.nextTurn(read);
      if (next !== null && !(await this.step(next.read, next.turn))) return false;
    }
    return true;
  }

  /**
   * The turn under way (taken up again after a crash), or the next one by the session's queue
   * mode, its messages tagged before its run starts; null when another writer changed the
   * record meanwhile (the caller reads it again).
   */
  private async nextTurn(read: QueueRead): Promise<{ read: QueueRead; turn: PlannedTurn } | null> {
    const running = runningTurn(read.queue);
    if (running !== undefined) return { read, turn: running };
    const head = read.queue.items[0]!;
    const planned = planTurn(read.queue, this.deps.turn.queueOf(read.queue, head.message).mode)!;
    if (planned.tagged === undefined) return { read, turn: planned.turn };
    const tagged = await this.deps.store.replace(read, planned.tagged);
    return tagged === null ? null : { read: tagged, turn: planned.turn };
  }

  /** One turn; false when the session should wait (the gateway's side failed). */
  private async step(read: QueueRead, turn: PlannedTurn): Promise<boolean> {
    const { queue } = read;
    const origin = { channelId: queue.channelId, accountId: queue.accountId };
    const eventKeys = turn.items.map((item) => eventKeyOf(origin, item.message.eventId));
    let outcome: TurnOutcome = { steered: [], aborted: false };
    try {
      const answered = await this.deps.answered.which(eventKeys);
      if (answered.size < eventKeys.length) outcome = await this.deps.turn.take(read, turn);
    } catch (err) {
      const head = turn.items[0]!;
      if (Date.now() - head.receivedAt < this.opts.retryForMs) {
        const count = (this.failures.get(read.key)?.count ?? 0) + 1;
        this.failures.set(read.key, { count, until: Date.now() + retryDelay(count - 1, SESSION_BACKOFF) });
        this.deps.logger.warn({ err, runId: turn.runId, failures: count }, "an inbound turn failed; the session will try again");
        return false;
      }
      this.deps.logger.error({ err, runId: turn.runId }, "an inbound turn is dropped after failing for too long");
      this.deps.status.inboundFailure(queue.channelId, queue.accountId, `dropped ${turn.runId}: ${(err as Error).message}`);
      await this.deps.turn.giveUp(read, head);
    }
    this.failures.delete(read.key);
    await this.finish(read, turn, outcome, eventKeys);
    return true;
  }

  /**
   * The turn is over: its messages, and those its run read, are remembered as answered and leave
   * the store; an interrupted turn's messages wait for the next turn instead.
   */
  private async finish(read: QueueRead, turn: PlannedTurn, outcome: TurnOutcome, eventKeys: string[]): Promise<void> {
    const { queue } = read;
    const origin = { channelId: queue.channelId, accountId: queue.accountId };
    const interrupted = outcome.aborted && (await this.deps.store.read(read.key))?.queue.interrupt === turn.runId;
    const steered = new Set(outcome.steered);
    if (!interrupted) await this.deps.answered.mark([...eventKeys, ...[...steered].map((id) => eventKeyOf(origin, id))], turn.runId);
    const only = turn.items[0]!;
    if (turn.items.length === 1 && only.turn === undefined && steered.size === 0) {
      await this.deps.store.remove(read.key, only.message.eventId, read);
      return;
    }
    const eventIds = turn.items.map((item) => item.message.eventId);
    await this.deps.store.change(read.key, (current) => endTurn(current, { runId: turn.runId, eventIds, steered, interrupted }));
  }
}
