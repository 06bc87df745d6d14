import { randomUUID } from "node:crypto";
import { type BackoffPolicy, type Logger, retryDelay, sleep } from "@gw/runtime";
import type { FastStore } from "@gw/store";
import type { DeferredRuns } from "../queues/deferred-runs.js";
import type { WakeQueue } from "../queues/wake-queue.js";
import type { RunDispatcher } from "../run-dispatch.js";
import { DEFAULT_HEARTBEAT_PROMPT, eventsForTurn, turnMessage } from "./turn-message.js";
import type { SlotState, TurnBatch, TurnSlot } from "./turn-slot.js";

export interface HeartbeatSettings {
  mainSessionKey: string;
  intervalMs: number;
  prompt?: string | undefined;
  channel?: string | undefined;
  to?: string | undefined;
  maxEventsPerTurn: number;
}

export interface HeartbeatDeps {
  wake: WakeQueue;
  deferred: DeferredRuns;
  slot: TurnSlot;
  dispatcher: RunDispatcher;
  store: FastStore;
  /** This process, as the holder of a turn and of heartbeat slots. */
  replicaId: string;
  logger: Logger;
  settings: HeartbeatSettings;
}

/** What one heartbeat did. */
export interface BeatResult {
  /** The main-session turn started (or found started) by this beat. */
  runId?: string;
  /** Wake-queue keys that turn took. */
  taken: string[];
  /** Another live replica is starting a turn right now. */
  busy: boolean;
}

/** A replica refreshes its liveness this often; gone for LIVENESS_TTL_MS, its half-started turn is taken over. */
const LIVENESS_EVERY_MS = 2_000;
const LIVENESS_TTL_MS = 6_000;
/** How long `wake` with mode "now" waits for a turn to take its text. */
const WAKE_NOW_WAIT_MS = 5_000;

/** How `wake` with mode "now" looks again for the turn that takes its text: 25 ms doubling to 250 ms. */
const WAKE_NOW_POLL: BackoffPolicy = { baseMs: 25, capMs: 250, jitter: "none" };

/**
 * The heartbeat (hooks.heartbeat.intervalSeconds): once per interval, across all replicas, it
 * dispatches the agent hooks deferred to it and gives the main session one turn of the default
 * agent holding the queued wake texts. Nothing queued: nothing runs.
 *
 * A turn takes its texts exactly once. It is written to the turn slot first (runId, nonce, the
 * texts' keys), then registered and queued, and only then are the texts removed and the slot
 * emptied. A replica that dies in between leaves the slot holding the batch; the next beat
 * (there or anywhere, once the holder's liveness has lapsed) finishes that same batch: the
 * repeat dispatch finds its run already registered and does not run it twice.
 */
export class Heartbeat {
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private liveness: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: HeartbeatDeps) {}

  private get livenessKey(): string {
    return `hooks:alive:${this.deps.replicaId}`;
  }

  async start(): Promise<void> {
    await this.markAlive();
    // markAlive and tick log their own failures; the catches only keep a bug there from escaping.
    this.liveness = setInterval(() => {
      this.markAlive().catch(() => undefined);
    }, LIVENESS_EVERY_MS);
    this.liveness.unref();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.liveness);
    await this.chain.catch(() => undefined);
    await this.deps.store.values.delete(this.livenessKey).catch(() => undefined);
  }

  /** One heartbeat now, after any other of this process. */
  beat(): Promise<BeatResult> {
    const next = this.chain.catch(() => undefined).then(() => this.beatOnce());
    this.chain = next;
    return next;
  }

  /**
   * `wake` with mode "now": beats until a turn has taken the text queued under `key`, and
   * answers that turn's runId; "" when another replica's turn took it, or it is still queued
   * after WAKE_NOW_WAIT_MS (the next heartbeat takes it).
   */
  async wakeNow(key: string): Promise<string> {
    const deadline = Date.now() + WAKE_NOW_WAIT_MS;
    for (let attempt = 0; ; attempt++) {
      const wait = retryDelay(attempt, WAKE_NOW_POLL);
      const result = await this.beat();
      if (result.taken.includes(key)) return result.runId ?? "";
      if (!(await this.deps.wake.has(key)) || Date.now() + wait > deadline) return "";
      await sleep(wait);
    }
  }

  private async beatOnce(): Promise<BeatResult> {
    await this.startDeferred();
    return this.mainTurn();
  }

  private async startDeferred(): Promise<void> {
    for (const run of await this.deps.deferred.list()) {
      try {
        await this.deps.dispatcher.dispatch(run.request, { endOnFailure: false });
        await this.deps.deferred.remove(run.key);
      } catch (err) {
        this.deps.logger.warn({ err, runId: run.request.runId }, "cannot start a deferred hook run; the next heartbeat retries");
        return;
      }
    }
  }

  private async mainTurn(): Promise<BeatResult> {
    const slot = await this.deps.slot.read();
    if (slot.batch !== null) {
      if (slot.batch.holder !== this.deps.replicaId && (await this.isAlive(slot.batch.holder))) {
        return { taken: [], busy: true };
      }
      // Left by a replica that died (or by an earlier failed beat here): finish that batch.
      return this.takeAndFinish({ ...slot.batch, holder: this.deps.replicaId }, slot);
    }
    const keys = await this.deps.wake.oldestKeys(this.deps.settings.maxEventsPerTurn);
    if (keys.length === 0) return { taken: [], busy: false };
    const batch: TurnBatch = { holder: this.deps.replicaId, runId: randomUUID(), nonce: randomUUID(), keys, createdAt: Date.now() };
    return this.takeAndFinish(batch, slot);
  }

  private async takeAndFinish(batch: TurnBatch, read: SlotState): Promise<BeatResult> {
    let revision = await this.deps.slot.take(batch, read);
    if (revision === null) return { taken: [], busy: true };
    // Read after the slot is ours: texts an earlier turn took (listed before it removed them) are gone by now.
    let events = await this.deps.wake.read(batch.keys);
    const fit = eventsForTurn(events);
    if (fit < events.length) {
      // Too much for one run request: the slot is narrowed to what this turn takes before anything
      // is dispatched, so a retry of the turn sends the same request; the rest wait, in order.
      const rest = events[fit]!.key;
      const narrowed = { ...batch, keys: batch.keys.filter((key) => key < rest) };
      revision = await this.deps.slot.take(narrowed, { batch, revision });
      if (revision === null) return { taken: [], busy: true };
      [batch, events] = [narrowed, events.slice(0, fit)];
    }
    if (events.length > 0) {
      const { settings } = this.deps;
      const request = this.deps.dispatcher.plan({
        runId: batch.runId,
        nonce: batch.nonce,
        sessionKey: settings.mainSessionKey,
        message: turnMessage(events),
        sender: "heartbeat",
        extraSystemPrompt: settings.prompt ?? DEFAULT_HEARTBEAT_PROMPT,
        deliver: settings.channel !== undefined || settings.to !== undefined,
        channel: settings.channel,
        to: settings.to,
      });
      const outcome = await this.deps.dispatcher.dispatch(request, { endOnFailure: false });
      this.deps.logger.info({ runId: batch.runId, events: events.length, outcome }, "heartbeat turn started");
    }
    await this.deps.wake.remove(batch.keys);
    await this.deps.slot.release(revision);
    return events.length > 0 ? { runId: batch.runId, taken: batch.keys, busy: false } : { taken: [], busy: false };
  }

  private schedule(): void {
    if (this.stopped) return;
    const interval = this.deps.settings.intervalMs;
    const slot = Math.floor(Date.now() / interval) + 1;
    // A little jitter, so replicas do not all reach the store in the same millisecond.
    const delay = slot * interval - Date.now() + Math.floor(Math.random() * 50);
    this.timer = setTimeout(() => {
      this.tick(slot).catch(() => undefined);
    }, delay);
    this.timer.unref();
  }

  /** One replica per interval beats: the first to claim the interval's slot in the FastStore. */
  private async tick(slot: number): Promise<void> {
    try {
      const interval = this.deps.settings.intervalMs;
      const ours = await this.deps.store.values.set(`hooks:heartbeat:${slot}`, this.deps.replicaId, {
        ifAbsent: true,
        ttlMs: interval * 2,
      });
      if (ours) await this.beat();
    } catch (err) {
      this.deps.logger.warn({ err }, "heartbeat failed; the next one retries");
    } finally {
      this.schedule();
    }
  }

  private async markAlive(): Promise<void> {
    await this.deps.store.values
      .set(this.livenessKey, String(Date.now()), { ttlMs: LIVENESS_TTL_MS })
      .catch((err: unknown) => this.deps.logger.warn({ err }, "cannot refresh this replica's liveness"));
  }

  private async isAlive(replicaId: string): Promise<boolean> {
    return (await this.deps.store.values.get(`hooks:alive:${replicaId}`)) !== null;
  }
}
