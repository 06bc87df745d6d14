import { randomUUID } from "node:crypto";
import type { Bus, Subjects } from "@gw/bus";
import {
  type AgentEventPayload,
  type AgentParams,
  GatewayError,
  isFinal,
  RunAbort,
  type RunHistoryMessage,
  type RunRecord,
  type RunRequest,
} from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { encodeAgentEvent, isTerminalEvent, type RunQueue, type RunRegistry, TERMINAL_SEQ } from "@gw/runs";
import type { RunEventRouter, RunFollower } from "./run-event-router.js";

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

export interface StartRun extends AgentParams {
  sender?: string;
  /** Stateless: the conversation so far travels with the run and no session is touched. */
  ephemeralHistory?: RunHistoryMessage[];
}

/** How often a waiting edge re-reads the registry: the runner-death detection step. */
const POLL_MS = 1_000;
/** Runner and edge clocks may differ by this much (NTP keeps them far closer). */
const SETTLE_SKEW_MS = 1_000;
/** Beyond the run's own timeout: time to sit in the queue and to report back. */
const QUEUE_GRACE_MS = 30_000;

/**
 * The edge's side of runs: register, follow, dispatch, await the end, wait, abort. Whoever
 * waits also watches the owner's heartbeat, so a runner that dies mid-run ends the run with a
 * lifecycle `error` within the heartbeat TTL plus one poll (docs/decisions.md).
 */
export class RunClient {
  constructor(private readonly deps: RunClientDeps) {}

  /** Starts a run and resolves with its final record (done, or error) once it ends. */
  async run(params: StartRun, follower: RunFollower): Promise<RunRecord> {
    const runId = params.runId ?? randomUUID();
    const now = Date.now();
    const nonce = randomUUID();
    const record: RunRecord = {
      runId,
      nonce,
      sessionKey: params.sessionKey,
      agentId: params.agentId ?? "",
      state: "queued",
      edgeId: this.deps.edgeId,
      createdAt: now,
      updatedAt: now,
    };
    const request: RunRequest = {
      runId,
      sessionKey: params.sessionKey,
      agentId: params.agentId ?? "",
      message: params.message,
      model: params.model ?? "",
      thinking: params.thinking ?? "",
      extraSystemPrompt: params.extraSystemPrompt ?? "",
      timeoutSeconds: params.timeoutSeconds ?? 0,
      deliver: params.deliver ?? false,
      messageChannel: params.messageChannel ?? "",
      to: params.to ?? "",
      sender: params.sender ?? "",
      edgeId: this.deps.edgeId,
      acceptedAt: now,
      ephemeral: params.ephemeralHistory !== undefined,
      history: params.ephemeralHistory ?? [],
      nonce,
    };
    const maxWaitMs = (params.timeoutSeconds ?? this.deps.defaultTimeoutSeconds) * 1000 + QUEUE_GRACE_MS;
    // Registering the run and dispatching it go out at once; the run's events come on this
    // edge's own run subject, subscribed since start-up (RunEventRouter). A runner runs the
    // request only once it finds the registration with this nonce (a request whose runId was
    // taken is never run). The follower hears events only once the runId is ours, so a
    // duplicate runId never sees the other run's events.
    // Listening before the run exists, this edge hears every event of it: the registry is read
    // only if events stop (the runner-death check), not on the way in.
    const follow = { flush: false, readRegistryFirst: false, startedBy: this.deps.edgeId };
    const final = await this.awaitEnd(runId, follower, maxWaitMs, follow, async (admit, finished) => {
      const created = this.deps.registry.create(record);
      const submitted = this.deps.queue.submit(request);
      submitted.catch(() => undefined);
      await created;
      admit();
      try {
        await submitted;
      } catch (cause) {
        this.deps.logger.error({ err: cause, runId }, "cannot dispatch a run");
        // Recorded as the run's end, and handed to the wait below (the bus may be what failed).
        finished(await this.end(record, "UNAVAILABLE", "the run could not be dispatched to a runner"));
      }
    });
    return final ?? this.timeOut(runId);
  }

  /** The run's record once final, or null when `timeoutMs` passes first. NOT_FOUND for unknown runs. */
  async wait(runId: string, timeoutMs: number, follower: RunFollower = {}): Promise<RunRecord | null> {
    const record = await this.deps.registry.get(runId);
    if (record === null) throw new GatewayError("NOT_FOUND", `unknown run: ${runId}`);
    if (isFinal(record.state)) return record;
    // The run may end between the read above and the subscription: read again at once.
    const follow = { flush: true, readRegistryFirst: true, startedBy: record.edgeId };
    return this.awaitEnd(runId, follower, timeoutMs, follow, async (admit) => admit());
  }

  /** Asks whichever runner holds the run to stop; false for unknown or finished runs. */
  async abort(runId: string): Promise<boolean> {
    const record = await this.deps.registry.get(runId);
    if (record === null || isFinal(record.state)) return false;
    // The marker catches a run still in the queue; the broadcast reaches the one running it.
    await this.deps.registry.requestAbort(runId);
    this.deps.bus.publish(this.deps.subjects.broadcast("run.abort"), RunAbort.encode({ runId }).finish());
    return true;
  }

  private async awaitEnd(
    runId: string,
    follower: RunFollower,
    timeoutMs: number,
    follow: { flush: boolean; readRegistryFirst: boolean; startedBy: string },
    afterFollow: (admit: () => void, finished: (final: RunRecord) => void) => Promise<void>,
  ): Promise<RunRecord | null> {
    let wake: (() => void) | undefined;
    let ended = false;
    let finalFromEvent: RunRecord | undefined;
    // Events (or, until the first, having just subscribed) prove the run alive and followed.
    let lastEventAt = follow.readRegistryFirst ? 0 : Date.now();
    let admitted = false;
    // Events that arrive before the runId is known to be ours (a fast runner can beat the
    // registration's reply): kept, then handed over on admission, or dropped with the follower.
    const early: Array<[AgentEventPayload, RunRecord | undefined]> = [];
    const handle = (payload: AgentEventPayload, final: RunRecord | undefined) => {
      lastEventAt = Date.now();
      follower.onEvent?.(payload, final);
      if (isTerminalEvent(payload)) {
        ended = true;
        finalFromEvent = final;
        wake?.();
      }
    };
    let over = false;
    const routed: RunFollower = {
      onEvent: (payload, final) => {
        if (over) return;
        if (admitted) handle(payload, final);
        else early.push([payload, final]);
      },
    };
    const followedAt = Date.now();
    // Without a flush, nothing is awaited between subscribing and `afterFollow`: the dispatch
    // joins the subscription in one write to the bus.
    const unfollow = follow.flush
      ? await this.deps.router.follow(runId, routed, follow)
      : this.deps.router.followNow(runId, routed, follow.startedBy);
    try {
      const admit = () => {
        admitted = true;
        routed.targetId = follower.targetId;
        this.deps.router.replay(runId, routed, early.map(([payload]) => payload));
        for (const [payload, final] of early.splice(0)) handle(payload, final);
      };
      const finished = (final: RunRecord) => {
        ended = true;
        finalFromEvent ??= final;
      };
      await afterFollow(admit, finished);
      const deadline = Date.now() + timeoutMs;
      // A run that ended while this edge subscribed may still have its last events in flight:
      // wait for the terminal event briefly, so this edge's sockets get every event before the
      // response. One that ended well before (beyond any clock skew) has nothing left to send.
      const settle = async (record: RunRecord) => {
        if (record.updatedAt < followedAt - SETTLE_SKEW_MS) return record;
        for (let i = 0; i < 40 && !ended; i++) await new Promise((resolve) => setTimeout(resolve, 50));
        return record;
      };
      for (;;) {
        // The runner's terminal event carries the final record: no registry read needed.
        if (finalFromEvent !== undefined) return finalFromEvent;
        const left = deadline - Date.now();
        // Events flowing prove the runner alive: skip the registry read until they pause.
        if (ended || Date.now() - lastEventAt > POLL_MS) {
          const record = await this.deps.registry.get(runId);
          if (record === null) throw new GatewayError("NOT_FOUND", `run ${runId} expired`);
          if (isFinal(record.state)) return await settle(record);
          if (record.state === "running" && !(await this.deps.registry.heartbeatAlive(runId))) {
            // The runner clears its heartbeat as it records the outcome: look again before
            // calling it dead.
            const again = await this.deps.registry.get(runId);
            if (again !== null && isFinal(again.state)) return await settle(again);
            this.deps.logger.warn({ runId, runner: record.owner }, "the run's runner stopped heartbeating; ending the run");
            return await settle(await this.end(record, "UNAVAILABLE", "the runner executing the run stopped responding"));
          }
        }
        if (left <= 0) return null;
        if (!ended)
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(POLL_MS, left));
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
      }
    } finally {
      // The answer goes out first: unsubscribing is a bus write the caller need not wait for.
      over = true;
      setImmediate(unfollow);
    }
  }

  /** Ends a run from outside its runner: record the error, tell every edge with a terminal event. */
  private async end(record: RunRecord, code: "UNAVAILABLE" | "TIMEOUT", message: string): Promise<RunRecord> {
    const final = await this.deps.registry.finish(record, { error: { code, message } });
    this.deps.bus.publish(
      this.deps.subjects.runEvents(record.edgeId, record.runId),
      encodeAgentEvent(
        { runId: record.runId, stream: "lifecycle", data: { phase: "error", error: message, code } },
        { sessionKey: record.sessionKey, seq: TERMINAL_SEQ, final },
      ),
    );
    return final;
  }

  private async timeOut(runId: string): Promise<RunRecord> {
    const record = await this.deps.registry.get(runId);
    if (record === null) throw new GatewayError("TIMEOUT", `run ${runId} did not finish in time`);
    if (isFinal(record.state)) return record;
    return this.end(record, "TIMEOUT", "no runner finished the run in time");
  }
}
