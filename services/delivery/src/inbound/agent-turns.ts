import { randomUUID } from "node:crypto";
import type { Bus, Subjects, Unsubscribe } from "@gw/bus";
import { decodeClientEvent, GatewayError, isFinal, isGatewayError, type RunRecord, type RunRequest } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { finalRecordOf, publishRunEnd, type RunQueue, type RunRegistry } from "@gw/runs";

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
}

/** Beyond the run's own timeout: time to wait in the run queue behind other work. */
const QUEUE_GRACE_MS = 30_000;

/**
 * Runs the agent for inbound messages, the way the edge runs `agent` (DESIGN §6): the run is
 * registered in the run registry and put on the run queue, and its terminal event, which carries
 * the final record, ends the wait. Every `pollMs` the wait also reads the registry, which catches
 * a runner that died (its heartbeat lapsed: the run is ended here with UNAVAILABLE, as the edge
 * would) and a run that ended while no event reached us. A runId already registered (a replay
 * after a delivery crash) is not run again: the wait follows the existing run, and a run still
 * queued is put on the queue again with its recorded nonce, in case the crash came between its
 * registration and its dispatch (the run queue drops a copy of a run it holds).
 */
export class AgentTurns {
  private readonly waiters = new Map<string, Set<(record: RunRecord) => void>>();
  private ownRuns: Unsubscribe | undefined;

  constructor(private readonly deps: AgentTurnsDeps) {}

  start(): void {
    this.ownRuns = this.deps.bus.subscribe(this.deps.subjects.runEvents({ startedBy: this.deps.starterId, part: "final" }), (data) => this.onEvent(data));
  }

  stop(): void {
    this.ownRuns?.();
  }

  /** The run's final record (done or error); never rejects for the run's own failure. */
  async run(turn: Turn, timeoutSeconds = this.deps.defaultTimeoutSeconds): Promise<RunRecord> {
    const maxWaitMs = timeoutSeconds * 1000 + QUEUE_GRACE_MS;
    const now = Date.now();
    const nonce = randomUUID();
    const record: RunRecord = {
      runId: turn.runId,
      nonce,
      sessionKey: turn.sessionKey,
      agentId: turn.agentId,
      state: "queued",
      edgeId: this.deps.starterId,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.deps.registry.create(record);
    } catch (err) {
      if (isGatewayError(err) && err.code === "CONFLICT") return this.resume(turn, maxWaitMs);
      throw err;
    }
    const ended = this.awaitEnd(turn.runId, maxWaitMs, false);
    try {
      await this.deps.queue.submit(this.request(turn, nonce, this.deps.starterId));
    } catch (err) {
      this.deps.logger.error({ err, runId: turn.runId }, "cannot dispatch an inbound turn");
      await this.end(record, "UNAVAILABLE", "the run could not be dispatched to a runner");
    }
    return ended;
  }

  /** A run registered before (by this replica's predecessor): follow it to its end. */
  private async resume(turn: Turn, maxWaitMs: number): Promise<RunRecord> {
    const record = await this.deps.registry.get(turn.runId);
    if (record === null) throw new GatewayError("UNAVAILABLE", `run ${turn.runId} was registered and is gone`);
    if (isFinal(record.state)) return record;
    const ended = this.awaitEnd(turn.runId, maxWaitMs, true);
    if (record.state === "queued" && record.nonce !== undefined) {
      await this.deps.queue.submit(this.request(turn, record.nonce, record.edgeId)).catch((err: unknown) => {
        this.deps.logger.warn({ err, runId: turn.runId }, "cannot dispatch a resumed inbound turn again");
      });
    }
    return ended;
  }

  private request(turn: Turn, nonce: string, starterId: string): RunRequest {
    return {
      runId: turn.runId,
      sessionKey: turn.sessionKey,
      agentId: turn.agentId,
      message: turn.message,
      model: "",
      thinking: "",
      extraSystemPrompt: "",
      timeoutSeconds: 0,
      deliver: false,
      messageChannel: "",
      to: "",
      sender: turn.sender,
      edgeId: starterId,
      acceptedAt: Date.now(),
      ephemeral: false,
      history: [],
      nonce,
      // A person's message on a channel: no OpenAI client tools or tool turns.
      clientTools: [],
      toolChoice: undefined,
      sampling: undefined,
      toolCallTurn: undefined,
      toolResults: [],
    };
  }

  /** Resolves with the final record, from the terminal event or the registry, whichever comes first. */
  private awaitEnd(runId: string, maxWaitMs: number, foreign: boolean): Promise<RunRecord> {
    const deadline = Date.now() + maxWaitMs;
    return new Promise<RunRecord>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let subscription: Unsubscribe | undefined;
      const settle = (finish: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        subscription?.();
        this.unwait(runId, onFinal);
        finish();
      };
      const onFinal = (record: RunRecord) => settle(() => resolve(record));
      const check = () => {
        if (settled) return;
        this.inspect(runId, deadline).then(
          (final) => (final ? onFinal(final) : (timer = setTimeout(check, this.deps.pollMs ?? 1_000))),
          (err: unknown) => settle(() => reject(err)),
        );
      };
      this.wait(runId, onFinal);
      // A run started by another replica publishes on that replica's subjects; only its record matters here.
      if (foreign) subscription = this.deps.bus.subscribe(this.deps.subjects.runEvents({ runId, part: "final" }), (data) => this.onEvent(data));
      timer = setTimeout(check, this.deps.pollMs ?? 1_000);
    });
  }

  /** The final record when the registry has one (ending a run whose runner died or ran out of time). */
  private async inspect(runId: string, deadline: number): Promise<RunRecord | undefined> {
    const record = await this.deps.registry.get(runId);
    if (record === null) throw new GatewayError("UNAVAILABLE", `run ${runId} is gone from the run registry`);
    if (isFinal(record.state)) return record;
    if (Date.now() > deadline) return this.end(record, "TIMEOUT", "no runner finished the run in time");
    if (record.state !== "running" || (await this.deps.registry.heartbeatAlive(runId))) return undefined;
    // The runner clears its heartbeat as it records the outcome: read once more before calling it dead.
    const again = await this.deps.registry.get(runId);
    if (again !== null && isFinal(again.state)) return again;
    this.deps.logger.warn({ runId, runner: record.owner }, "an inbound turn's runner stopped heartbeating; ending the run");
    return this.end(record, "UNAVAILABLE", "the runner executing the run stopped responding");
  }

  /** Ends a run for a runner that cannot, and tells every follower, as the edge does (end-run.ts). */
  private async end(record: RunRecord, code: "UNAVAILABLE" | "TIMEOUT", message: string): Promise<RunRecord> {
    const final = await this.deps.registry.finish(record, { error: { code, message } });
    publishRunEnd(this.deps.bus, this.deps.subjects, final, code, message);
    return final;
  }

  private onEvent(data: Uint8Array): void {
    let final: RunRecord | undefined;
    try {
      final = finalRecordOf(decodeClientEvent(data));
    } catch (err) {
      this.deps.logger.warn({ err }, "an undecodable run event");
      return;
    }
    if (final === undefined) return;
    for (const waiter of [...(this.waiters.get(final.runId) ?? [])]) waiter(final);
  }

  private wait(runId: string, waiter: (record: RunRecord) => void): void {
    const set = this.waiters.get(runId) ?? new Set();
    set.add(waiter);
    this.waiters.set(runId, set);
  }

  private unwait(runId: string, waiter: (record: RunRecord) => void): void {
    const set = this.waiters.get(runId);
    set?.delete(waiter);
    if (set?.size === 0) this.waiters.delete(runId);
  }
}
