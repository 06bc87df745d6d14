import { decodeJson, GatewayError, isFinal, type RunRecord, RunRecordSchema } from "@gw/contracts";
import { type BackoffPolicy, retryDelay, sleep } from "@gw/runtime";
import type { FastStore } from "@gw/store";
import { RunInbox } from "./run-inbox.js";

/** A record read back from the store, through its schema. */
function parseRecord(raw: string): RunRecord {
  return decodeJson(Buffer.from(raw, "utf8"), RunRecordSchema, "run record in the store");
}

export interface RunRegistryOptions {
  /** How long a finished run's record (its result for agent.wait) is kept. */
  retentionMs: number;
  /** Upper bound on a live record's life, so a lost run cannot pin memory forever. */
  liveTtlMs: number;
  /** A runner refreshes its runs' heartbeats more often than this; absence means it died. */
  heartbeatTtlMs: number;
}

export const DEFAULT_REGISTRY_OPTIONS: RunRegistryOptions = {
  retentionMs: 600_000,
  liveTtlMs: 2 * 3_600_000,
  heartbeatTtlMs: 6_000,
};

/** The registry's options for a deployment: its configured retention, the rest fixed. */
export function registryOptionsFor(runner: { resultRetentionSeconds: number }): RunRegistryOptions {
  return { ...DEFAULT_REGISTRY_OPTIONS, retentionMs: runner.resultRetentionSeconds * 1000 };
}

/** How a runner keeps looking for a just-dispatched run's registration: 2, 4, ... 2048 ms apart. */
const REGISTRATION_POLL: BackoffPolicy = { baseMs: 2, capMs: 2_048, jitter: "none" };
/** Looks after the first (2 * 2^10 = 2048 ms: about 4 s in all). */
const REGISTRATION_LOOKS = 11;

/**
 * A run's keys carry its id as their hash tag, so on a Redis Cluster they share a slot: the
 * record and a pending abort are read in one atomic MGET, and the claim's and the outcome's
 * writes stay in order.
 */
const runKey = (runId: string) => `run:{${runId}}`;
const heartbeatKey = (runId: string) => `runhb:{${runId}}`;
const abortKey = (runId: string) => `runabort:{${runId}}`;
/**
 * The ids of runs not yet final, for `runs.list`: one set on the whole deployment (a Redis
 * Cluster keeps it on one node; an add and a remove per run). A member whose record is final or
 * gone (a runner that died before it removed it) is dropped by the next list.
 */
const LIVE_RUNS_KEY = "runs:live";

/** A run not yet final, and whether its owner's heartbeat is there (always false while queued). */
export interface LiveRun {
  record: RunRecord;
  heartbeat: boolean;
}

/**
 * Run state shared by edges and runners (DESIGN §6), on the FastStore: the record
 * (`run:{<id>}`), the owner's heartbeat (`runhb:{<id>}`), a pending abort (`runabort:{<id>}`) and
 * the per-session lock that serialises runs on one session (`runlock:<sessionKey>`).
 */
export class RunRegistry {
  /** Messages handed to runs after their start (run-inbox.ts). */
  readonly inbox: RunInbox;
  /** Runners that claimed runs through this instance: in this process, so alive while it is. */
  private readonly localOwners = new Set<string>();

  constructor(
    private readonly store: FastStore,
    readonly opts: RunRegistryOptions = DEFAULT_REGISTRY_OPTIONS,
  ) {
    this.inbox = new RunInbox(store, opts.liveTtlMs);
  }

  /** Registers a new run; a runId that is live or still retained is a CONFLICT. */
  async create(record: RunRecord): Promise<void> {
    const written = await this.store.values.set(runKey(record.runId), JSON.stringify(record), {
      ttlMs: this.opts.liveTtlMs,
      ifAbsent: true,
    });
    if (!written) throw new GatewayError("CONFLICT", `runId ${record.runId} is already in use`);
    await this.store.sets.add(LIVE_RUNS_KEY, record.runId, this.opts.liveTtlMs);
  }

  /**
   * The runs not yet final (queued or running), oldest first, at most `limit`, each with whether
   * its runner's heartbeat is there (a running run without one lost its runner).
   */
  async listLive(limit: number): Promise<LiveRun[]> {
    const ids = await this.store.sets.members(LIVE_RUNS_KEY);
    if (ids.length === 0) return [];
    const raws = await this.store.values.getMany([...ids.map(runKey), ...ids.map(heartbeatKey)]);
    const live: LiveRun[] = [];
    const gone: string[] = [];
    ids.forEach((runId, i) => {
      const raw = raws[i];
      const record = raw === null || raw === undefined ? null : parseRecord(raw);
      if (record === null || isFinal(record.state)) gone.push(runId);
      else live.push({ record, heartbeat: raws[ids.length + i] !== null && raws[ids.length + i] !== undefined });
    });
    await Promise.all(gone.map((runId) => this.store.sets.remove(LIVE_RUNS_KEY, runId)));
    return live.sort((a, b) => a.record.createdAt - b.record.createdAt).slice(0, limit);
  }

  async get(runId: string): Promise<RunRecord | null> {
    const raw = await this.store.values.get(runKey(runId));
    return raw === null ? null : parseRecord(raw);
  }

  /** Claims a queued run for `owner`; null when it is gone or already final (skip it). */
  async claim(runId: string, owner: string, nonce?: string): Promise<RunRecord | null> {
    const claim = await this.beginClaim(runId, owner, nonce);
    if (claim === null) return null;
    await claim.written;
    return claim.record;
  }

  /**
   * The claim without waiting for its write: a runner starts the run as soon as it knows the
   * run is still queued. Its outcome is written later on the same store, which applies one
   * process's value writes in order (FastStore), so the record still moves queued -> running ->
   * final without the runner waiting for `written`.
   */
  async beginClaim(
    runId: string,
    owner: string,
    nonce?: string,
  ): Promise<{ record: RunRecord; written: Promise<void>; abortRequested: boolean } | null> {
    const { record, abortRequested } = await this.recordOfDispatch(runId, nonce);
    if (record === null || record.state !== "queued") return null;
    this.localOwners.add(owner);
    const next: RunRecord = { ...record, state: "running", owner, updatedAt: Date.now() };
    // Heartbeat and record in one round trip.
    const written = this.store.values.writeAll([
      { key: heartbeatKey(runId), value: owner, ttlMs: this.opts.heartbeatTtlMs },
      { key: runKey(runId), value: JSON.stringify(next), ttlMs: this.opts.liveTtlMs },
    ]);
    // Awaited by the caller later; never an unhandled rejection meanwhile.
    written.catch(() => undefined);
    return { record: next, written, abortRequested };
  }

  /**
   * The record a dispatched request belongs to. The edge registers a run and dispatches it at
   * the same time, so a runner may look before the registration has landed: it looks again for
   * a short while. A record with another nonce belongs to another dispatch (this request lost
   * its registration to a run with the same runId): not this request's.
   */
  private async recordOfDispatch(
    runId: string,
    nonce: string | undefined,
  ): Promise<{ record: RunRecord | null; abortRequested: boolean }> {
    for (let attempt = 0; ; attempt++) {
      // The record and a pending abort in one round trip.
      const [raw, abort] = await this.store.values.getMany([runKey(runId), abortKey(runId)]);
      const abortRequested = abort !== null;
      if (raw !== null && raw !== undefined) {
        const record = parseRecord(raw);
        return { record: nonce === undefined || record.nonce === nonce ? record : null, abortRequested };
      }
      if (nonce === undefined || attempt >= REGISTRATION_LOOKS) return { record: null, abortRequested };
      await sleep(retryDelay(attempt, REGISTRATION_POLL));
    }
  }

  /** Records the outcome, readable for the retention window. */
  async finish(record: RunRecord, outcome: Pick<RunRecord, "payloads" | "error">): Promise<RunRecord> {
    const { final, written } = this.beginFinish(record, outcome);
    await written;
    return final;
  }

  /**
   * The final record at once, and its write under way: a runner announces the outcome while
   * the write travels. Independent keys, so one round trip; a waiter that sees the heartbeat
   * gone before the record is final re-reads the record before it declares the runner dead.
   */
  beginFinish(
    record: RunRecord,
    outcome: Pick<RunRecord, "payloads" | "error" | "finishReason" | "toolCalls" | "usage" | "model" | "fallbacks" | "steered">,
  ): { final: RunRecord; written: Promise<void> } {
    const final: RunRecord = {
      ...record,
      ...outcome,
      state: outcome.error === undefined ? "done" : "error",
      updatedAt: Date.now(),
    };
    const written = Promise.all([
      this.store.values.writeAll([
        { key: runKey(record.runId), value: JSON.stringify(final), ttlMs: this.opts.retentionMs },
        { key: heartbeatKey(record.runId), value: null },
      ]),
      this.store.sets.remove(LIVE_RUNS_KEY, record.runId),
    ]).then(() => undefined);
    written.catch(() => undefined);
    return { final, written };
  }

  async heartbeat(runId: string, owner: string): Promise<void> {
    await this.store.values.set(heartbeatKey(runId), owner, { ttlMs: this.opts.heartbeatTtlMs });
  }

  /**
   * Whether `owner` is a runner in this process (embedded mode: the edge, delivery and hooks
   * share the runner's registry). Such a runner is alive as long as whoever asks is: a lapsed
   * heartbeat only means the shared event loop fell behind.
   */
  isLocalOwner(owner: string | undefined): boolean {
    return owner !== undefined && this.localOwners.has(owner);
  }

  async heartbeatAlive(runId: string): Promise<boolean> {
    return (await this.store.values.get(heartbeatKey(runId))) !== null;
  }

  async requestAbort(runId: string): Promise<void> {
    await this.store.values.set(abortKey(runId), "1", { ttlMs: this.opts.liveTtlMs });
  }

  async abortRequested(runId: string): Promise<boolean> {
    return (await this.store.values.get(abortKey(runId))) !== null;
  }

  /**
   * Takes the session's run lock if free; the holder refreshes it with refreshSessionLock. The
   * lock is a FastStore lease held by `runId`: refresh and unlock compare the holder atomically,
   * so a run whose lock lapsed can neither extend nor free the next run's.
   */
  async tryLockSession(sessionKey: string, runId: string): Promise<boolean> {
    return this.store.leases.acquire(`runlock:${sessionKey}`, runId, this.opts.heartbeatTtlMs * 2);
  }

  async refreshSessionLock(sessionKey: string, runId: string): Promise<void> {
    await this.store.leases.renew(`runlock:${sessionKey}`, runId, this.opts.heartbeatTtlMs * 2);
  }

  async unlockSession(sessionKey: string, runId: string): Promise<void> {
    await this.store.leases.release(`runlock:${sessionKey}`, runId);
  }
}
