import type { Bus, Subjects } from "@gw/bus";
import {
  type AgentParams,
  GatewayError,
  isFinal,
  RunAbort,
  type RunHistoryMessage,
  type RunRecord,
  type RunRequest,
  toRunAttachment,
} from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { endOverdueRun, endRun, queuedRecord, type RunQueue, type RunRegistry, runRequest, type RunWaitTimings } from "@gw/runs";
import type { RunEventRouter, RunFollower } from "../events/run-event-router.js";
import { RoutedWait, type RoutedWaitDeps } from "./routed-wait.js";

export interface RunClientDeps {
  bus: Bus;
  subjects: Subjects;
  registry: RunRegistry;
  queue: RunQueue;
  router: RunEventRouter;
  edgeId: string;
  logger: Logger;
  /** The runner's default run timeout, so the edge knows how long a run may take. */
  defaultTimeoutSeconds: number;
}

/**
 * How a waiting edge watches a run: re-read the registry after a second without events (the
 * runner-death check), give a run the registry shows as over 2 s to deliver its last events,
 * and allow runner and edge clocks 1 s of difference (NTP keeps them far closer).
 */
export const RUN_WAIT_TIMINGS: RunWaitTimings = { pollMs: 1_000, settleMs: 2_000, skewMs: 1_000 };

/** Beyond the run's own timeout: time to sit in the queue and to report back. */
const QUEUE_GRACE_MS = 30_000;

/** Throws when the caller may not touch this run (a webchat connection and another's session). */
export type RunGuard = (record: RunRecord) => void;

export interface StartRun extends AgentParams {
  sender?: string;
  /** Stateless: the conversation so far travels with the run and no session is touched. */
  ephemeralHistory?: RunHistoryMessage[];
  /** What OpenAI-compatible requests add (proto RunRequest): client tools, sampling, tool results. */
  openai?: Pick<RunRequest, "clientTools" | "toolChoice" | "sampling" | "toolCallTurn" | "toolResults">;
}

/**
 * The edge's side of runs: register and dispatch, wait, abort. Whoever waits also watches the
 * owner's heartbeat (@gw/runs' runner-death detector), so a runner that dies mid-run ends the run with a
 * lifecycle `error` within the heartbeat TTL plus one poll (docs/decisions.md).
 */
export class RunClient {
  private readonly waiting: RoutedWaitDeps;
  /** Every wait in progress, by the function that cuts it off (stopWaiting). */
  private readonly cutoffs = new Set<() => void>();

  constructor(private readonly deps: RunClientDeps) {
    this.waiting = { ...deps, timings: RUN_WAIT_TIMINGS };
  }

  /** Starts a run and resolves with its final record (done, or error) once it ends. */
  async run(params: StartRun, follower: RunFollower): Promise<RunRecord> {
    const { record, request } = this.newRun(params);
    const maxWaitMs = Math.round((params.timeoutSeconds ?? this.deps.defaultTimeoutSeconds) * 1000) + QUEUE_GRACE_MS;
    // The run's events come on this edge's own run subject, subscribed since start-up
    // (RunEventRouter): following it costs nothing on the bus, and this edge hears every event
    // of the run, so the registry is read only if events stop (the runner-death check).
    const waiting = RoutedWait.followNow(this.waiting, record.runId, follower, {
      startedBy: this.deps.edgeId,
      sessionKey: record.sessionKey,
      checkFirst: false,
    });
    try {
      // Registering the run and dispatching it go out at once. A runner runs the request only
      // once it finds the registration with this nonce, so a request whose runId was taken is
      // never run; and the follower hears events only once the runId is ours (`admit`), so a
      // duplicate runId never sees the other run's events.
      const created = this.deps.registry.create(record);
      const submitted = this.deps.queue.submit(request);
      submitted.catch(() => undefined);
      await created;
      waiting.admit();
      try {
        await submitted;
      } catch (cause) {
        this.deps.logger.error({ err: cause, runId: record.runId }, "cannot dispatch a run");
        // Recorded as the run's end and handed to the wait (the bus may be what failed).
        waiting.dispatchFailed(await endRun(this.deps, record, "UNAVAILABLE", "the run could not be dispatched to a runner"));
      }
      return (await this.cutOff(record.runId, waiting.result(maxWaitMs))) ?? (await this.timeOut(record.runId));
    } finally {
      waiting.close();
    }
  }

  /**
   * Ends every wait in progress with UNAVAILABLE naming its run (the edge drains and cannot
   * wait any longer). The runs themselves go on: their runners finish them, and `agent.wait`
   * on any edge answers with the outcome.
   */
  stopWaiting(): void {
    for (const cut of [...this.cutoffs]) cut();
  }

  private cutOff<T>(runId: string, work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const cut = () =>
        reject(
          new GatewayError("UNAVAILABLE", `this edge shut down before run ${runId} finished; the run goes on: agent.wait on another edge`, {
            details: { runId },
          }),
        );
      this.cutoffs.add(cut);
      work.then(resolve, reject).finally(() => this.cutoffs.delete(cut));
    });
  }

  /** The run's record once final, or null when `timeoutMs` passes first. NOT_FOUND for unknown runs. */
  async wait(runId: string, timeoutMs: number, follower: RunFollower = {}, guard?: RunGuard): Promise<RunRecord | null> {
    const record = await this.deps.registry.get(runId);
    if (record === null) throw new GatewayError("NOT_FOUND", `unknown run: ${runId}`);
    guard?.(record);
    if (isFinal(record.state)) return record;
    // The run may end between the read above and the subscription: the wait checks at once.
    const waiting = await RoutedWait.follow(this.waiting, runId, follower, {
      startedBy: record.edgeId,
      sessionKey: record.sessionKey,
      checkFirst: true,
    });
    try {
      waiting.admit();
      return await this.cutOff(runId, waiting.result(timeoutMs));
    } finally {
      waiting.close();
    }
  }

  /** Asks whichever runner holds the run to stop; false for unknown or finished runs. */
  async abort(runId: string, guard?: RunGuard): Promise<boolean> {
    const record = await this.deps.registry.get(runId);
    if (record !== null) guard?.(record);
    if (record === null || isFinal(record.state)) return false;
    // The marker catches a run still in the queue; the broadcast reaches the one running it.
    await this.deps.registry.requestAbort(runId);
    this.deps.bus.publish(this.deps.subjects.broadcast("run.abort"), RunAbort.encode({ runId }).finish());
    return true;
  }

  private newRun(params: StartRun): { record: RunRecord; request: RunRequest } {
    const { ephemeralHistory, openai, ...agent } = params;
    const request = runRequest({
      runId: agent.runId,
      sessionKey: agent.sessionKey,
      agentId: agent.agentId,
      message: agent.message,
      model: agent.model,
      thinking: agent.thinking,
      extraSystemPrompt: agent.extraSystemPrompt,
      timeoutSeconds: agent.timeoutSeconds,
      deliver: agent.deliver,
      messageChannel: agent.messageChannel,
      to: agent.to,
      sender: agent.sender,
      edgeId: this.deps.edgeId,
      ephemeral: ephemeralHistory !== undefined,
      history: ephemeralHistory,
      attachments: (agent.attachments ?? []).map(toRunAttachment),
      ...openai,
    });
    return { record: queuedRecord(request), request };
  }

  /** Nobody finished the run in time: end it, unless it ended meanwhile. */
  private async timeOut(runId: string): Promise<RunRecord> {
    const record = await endOverdueRun(this.deps, runId);
    if (record === null) throw new GatewayError("TIMEOUT", `run ${runId} did not finish in time`);
    return record;
  }
}
