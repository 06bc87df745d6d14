import { GatewayError, type RunRecord } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { RunEventRouter, RunFollower } from "../events/run-event-router.js";
import { type EndRunDeps, endRun } from "./end-run.js";
import { RunWait, type RunWaitTimings, type WaitEffect, type WaitInput } from "./run-wait.js";
import { inspectRun } from "./runner-death.js";

export interface RunWaitingDeps extends EndRunDeps {
  router: RunEventRouter;
  logger: Logger;
  timings: RunWaitTimings;
}

export interface FollowOptions {
  /** The edge that started the run: this edge's own runs need no subscription of their own. */
  startedBy: string;
  /** The run's session, when known (a session subscription on this edge already brings its events). */
  sessionKey?: string;
  /** Check the registry as soon as the wait starts (agent.wait: the run may be over already). */
  checkFirst: boolean;
}

/**
 * One wait on one run: binds a RunWait (the state machine) to the run's events, a timer and
 * the registry. Make it with `follow` (or `followNow`), `admit()` it once the runId is known to
 * be the caller's, await `result()`, and always `close()` it.
 */
export class RunWaiting {
  private readonly wait: RunWait;
  private readonly routed: RunFollower;
  private unfollow: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly settled: Promise<RunRecord | null>;
  private resolve!: (result: RunRecord | null) => void;
  private reject!: (err: unknown) => void;

  private constructor(
    private readonly deps: RunWaitingDeps,
    private readonly runId: string,
    private readonly follower: RunFollower,
    opts: FollowOptions,
  ) {
    this.wait = new RunWait(deps.timings, Date.now(), opts.checkFirst);
    this.routed = { onEvent: (payload, final) => this.feed({ type: "event", payload, final, at: Date.now() }) };
    this.settled = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Never an unhandled rejection while the caller is still dispatching.
    this.settled.catch(() => undefined);
  }

  /**
   * Subscribed with nothing awaited, so a message the caller sends in the same turn (the
   * dispatch) joins the subscription in one write to the bus.
   */
  static followNow(deps: RunWaitingDeps, runId: string, follower: RunFollower, opts: FollowOptions): RunWaiting {
    const waiting = new RunWaiting(deps, runId, follower, opts);
    waiting.unfollow = deps.router.followNow(runId, waiting.routed, { startedBy: opts.startedBy, sessionKey: opts.sessionKey });
    return waiting;
  }

  /** Subscribed and flushed: nothing published from now on is missed. */
  static async follow(deps: RunWaitingDeps, runId: string, follower: RunFollower, opts: FollowOptions): Promise<RunWaiting> {
    const waiting = new RunWaiting(deps, runId, follower, opts);
    waiting.unfollow = await deps.router.follow(runId, waiting.routed, { startedBy: opts.startedBy, sessionKey: opts.sessionKey });
    return waiting;
  }

  /** The runId is the caller's: its socket hears the run's events from now on. */
  admit(): void {
    this.routed.targetId = this.follower.targetId;
    this.feed({ type: "admitted", at: Date.now() });
  }

  /** The dispatch failed and `final` recorded the run's end. */
  dispatchFailed(final: RunRecord): void {
    this.feed({ type: "dispatch-failed", final });
  }

  /** The run's final record, or null when `timeoutMs` passes first. */
  result(timeoutMs: number): Promise<RunRecord | null> {
    const at = Date.now();
    this.feed({ type: "start", at, deadline: at + timeoutMs });
    return this.settled;
  }

  close(): void {
    clearTimeout(this.timer);
    this.wait.step({ type: "abandon" });
    const unfollow = this.unfollow;
    this.unfollow = undefined;
    // The answer goes out first: unsubscribing is a bus write the caller need not wait for.
    if (unfollow) setImmediate(unfollow);
  }

  private feed(input: WaitInput): void {
    for (const effect of this.wait.step(input)) this.apply(effect);
  }

  private apply(effect: WaitEffect): void {
    switch (effect.type) {
      case "deliver":
        this.follower.onEvent?.(effect.payload, effect.final);
        return;
      case "replay":
        this.deps.router.replay(this.runId, this.routed, effect.payloads);
        return;
      case "check":
        inspectRun(this.deps.registry, this.runId).then(
          (verdict) => this.feed({ type: "checked", verdict, at: Date.now() }),
          (err: unknown) => this.fail(err),
        );
        return;
      case "end-run":
        this.deps.logger.warn({ runId: this.runId, runner: effect.record.owner }, "the run's runner stopped heartbeating; ending the run");
        endRun(this.deps, effect.record, "UNAVAILABLE", "the runner executing the run stopped responding").then(
          (record) => this.feed({ type: "ended", record, at: Date.now() }),
          (err: unknown) => this.fail(err),
        );
        return;
      case "wake-at":
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.feed({ type: "tick", at: Date.now() }), Math.max(0, effect.at - Date.now()));
        return;
      case "finish":
        clearTimeout(this.timer);
        this.resolve(effect.result);
        return;
      case "expired":
        this.fail(new GatewayError("NOT_FOUND", `run ${this.runId} expired`));
        return;
    }
  }

  private fail(err: unknown): void {
    clearTimeout(this.timer);
    this.wait.step({ type: "abandon" });
    this.reject(err);
  }
}
