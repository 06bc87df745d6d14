import type { Bus, Subjects, Unsubscribe } from "@gw/bus";
import {
  decodeAgentEventPayload,
  decodeClientEvent,
  GatewayError,
  type InboxEntry,
  isFinal,
  isGatewayError,
  type RunAttachment,
  type RunRecord,
  type RunRequest,
} from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { endOverdueRun, endRun, finalRecordOf, queuedRecord, registerRun, type RunQueue, type RunRegistry, runRequest, RunWaiting, type RunWaitingDeps } from "@gw/runs";

export interface AgentTurnsDeps {
  bus: Bus;
  subjects: Subjects;
  queue: RunQueue;
  registry: RunRegistry;
  logger: Logger;
  /** Names this replica as the runs' starter: their events come on its own run subject. */
  starterId: string;
  /** The runner's default run timeout (runner.defaultTimeoutSeconds). */
  defaultTimeoutSeconds: number;
  /** How often a waiting turn reads the registry (runner death, lost events); default 1 s. */
  pollMs?: number;
}

export interface Turn {
  /** Derived from the event, so a replay finds this run instead of starting another. */
  runId: string;
  sessionKey: string;
  /** "" for the default agent. */
  agentId: string;
  message: string;
  sender: string;
  /** Images the person sent (inbound-media.ts), fetched before the run. */
  attachments?: RunAttachment[];
}

/** Beyond the run's own timeout: time to wait in the run queue behind other work. */
const QUEUE_GRACE_MS = 30_000;

/**
 * Runs the agent for inbound messages, the way the edge runs `agent` (DESIGN §6), with the run
 * lifecycle of @gw/runs: the run is registered in the run registry and put on the run queue,
 * and its terminal event, which carries the final record, ends the wait (RunWaiting). A run
 * quiet for `pollMs` is read in the registry, which catches a runner that died (its heartbeat
 * lapsed: the run is ended with UNAVAILABLE, as the edge would) and a run that ended while no
 * event reached us; a run still going when its time is up is ended with TIMEOUT. A runId
 * already registered (a replay after a delivery crash) is not run again: the wait follows the
 * existing run, and a run still queued is put on the queue again with its recorded nonce, in
 * case the crash came between its registration and its dispatch (the run queue drops a copy of
 * a run it holds).
 */
export class AgentTurns {
  private readonly waiting = new Map<string, Set<RunWaiting>>();
  private readonly lifecycle: RunWaitingDeps;
  private ownRuns: Unsubscribe | undefined;

  constructor(private readonly deps: AgentTurnsDeps) {
    // Only the final record matters here (nobody hears the run's events through this service):
    // a run the registry shows as over needs no time to deliver its last events.
    this.lifecycle = { ...deps, timings: { pollMs: deps.pollMs ?? 1_000, settleMs: 0, skewMs: 0 } };
  }

  start(): void {
    this.ownRuns = this.deps.bus.subscribe(this.deps.subjects.runEvents({ startedBy: this.deps.starterId, part: "final" }), (data) => this.onEvent(data));
  }

  stop(): void {
    this.ownRuns?.();
  }

  /** The run's final record (done or error); never rejects for the run's own failure. */
  async run(turn: Turn, timeoutSeconds = this.deps.defaultTimeoutSeconds): Promise<RunRecord> {
    const maxWaitMs = timeoutSeconds * 1000 + QUEUE_GRACE_MS;
    const request = this.request(turn, { edgeId: this.deps.starterId });
    const record = queuedRecord(request);
    const registration = await registerRun(this.deps.registry, record);
    if (!registration.registered) return this.resume(turn, registration.existing, maxWaitMs);
    return this.follow(turn.runId, maxWaitMs, { checkFirst: false }, async (waiting) => {
      try {
        await this.deps.queue.submit(request);
      } catch (err) {
        this.deps.logger.error({ err, runId: turn.runId }, "cannot dispatch an inbound turn");
        waiting.dispatchFailed(await endRun(this.deps, record, "UNAVAILABLE", "the run could not be dispatched to a runner"));
      }
    });
  }

  /** Hands messages to a run, started or about to be (its inbox, libs/runs run-inbox.ts). */
  offer(runId: string, entries: readonly InboxEntry[]): Promise<void> {
    return this.deps.registry.inbox.offer(runId, entries);
  }

  /** The run's record as the registry holds it (null once it is gone). */
  recorded(runId: string): Promise<RunRecord | null> {
    return this.deps.registry.get(runId);
  }

  /** A run registered before (by this replica's predecessor): follow it to its end. */
  private async resume(turn: Turn, record: RunRecord | null, maxWaitMs: number): Promise<RunRecord> {
    if (record === null) throw new GatewayError("UNAVAILABLE", `run ${turn.runId} was registered and is gone`);
    if (isFinal(record.state)) return record;
    // A run started by another replica publishes on that replica's subjects; only its record matters here.
    const foreign = this.deps.bus.subscribe(this.deps.subjects.runEvents({ runId: turn.runId, part: "final" }), (data) => this.onEvent(data));
    try {
      // It may end between the read above and the subscription: the wait reads the registry at once.
      return await this.follow(turn.runId, maxWaitMs, { checkFirst: true }, async () => {
        if (record.state !== "queued" || record.nonce === undefined) return;
        await this.deps.queue.submit(this.request(turn, { edgeId: record.edgeId, nonce: record.nonce })).catch((err: unknown) => {
          this.deps.logger.warn({ err, runId: turn.runId }, "cannot dispatch a resumed inbound turn again");
        });
      });
    } finally {
      foreign();
    }
  }

  /** A person's message on a channel: no delivery by the runner, no OpenAI client tools or tool turns. */
  private request(turn: Turn, from: { edgeId: string; nonce?: string }): RunRequest {
    const { runId, sessionKey, agentId, message, sender, attachments } = turn;
    return runRequest({ ...from, runId, sessionKey, agentId, message, sender, attachments });
  }

  /**
   * Waits for the run's end once `dispatch` has sent it: its terminal event's record, the
   * registry's, or the run ended here (its runner died, or its time is up).
   */
  private async follow(runId: string, maxWaitMs: number, opts: { checkFirst: boolean }, dispatch: (waiting: RunWaiting) => Promise<void>): Promise<RunRecord> {
    const waiting = new RunWaiting(this.lifecycle, runId, opts);
    const set = this.waiting.get(runId) ?? new Set();
    this.waiting.set(runId, set.add(waiting));
    try {
      waiting.admit();
      await dispatch(waiting);
      const ended = await waiting.result(maxWaitMs).catch((err: unknown) => {
        if (isGatewayError(err) && err.code === "NOT_FOUND") throw new GatewayError("UNAVAILABLE", `run ${runId} is gone from the run registry`);
        throw err;
      });
      if (ended !== null) return ended;
      const overdue = await endOverdueRun(this.deps, runId);
      if (overdue === null) throw new GatewayError("UNAVAILABLE", `run ${runId} is gone from the run registry`);
      return overdue;
    } finally {
      waiting.close();
      set.delete(waiting);
      if (set.size === 0) this.waiting.delete(runId);
    }
  }

  private onEvent(data: Uint8Array): void {
    try {
      const event = decodeClientEvent(data);
      const final = finalRecordOf(event);
      if (final === undefined) return;
      const payload = decodeAgentEventPayload(event.payloadJson);
      for (const waiting of [...(this.waiting.get(final.runId) ?? [])]) waiting.event(payload, final);
    } catch (err) {
      this.deps.logger.warn({ err }, "an undecodable run event");
    }
  }
}
