import type { RunRecord } from "@gw/contracts";
import { RunWaiting, type RunWaitingDeps } from "@gw/runs";
import type { RunEventRouter, RunFollower } from "../events/run-event-router.js";

export interface RoutedWaitDeps extends RunWaitingDeps {
  router: RunEventRouter;
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
 * One wait on one run, fed by this edge's RunEventRouter: the wait itself is @gw/runs'
 * RunWaiting; this binds it to the router, so the follower (a socket, an in-process listener)
 * hears the run's events once the runId is the caller's. Make it with `follow` (or
 * `followNow`), `admit()` it, await `result()`, and always `close()` it.
 */
export class RoutedWait {
  private readonly waiting: RunWaiting;
  private readonly routed: RunFollower;
  private unfollow: (() => void) | undefined;

  private constructor(deps: RoutedWaitDeps, runId: string, private readonly follower: RunFollower, opts: FollowOptions) {
    this.waiting = new RunWaiting(deps, runId, opts, {
      deliver: (payload, final) => follower.onEvent?.(payload, final),
      replay: (payloads) => deps.router.replay(runId, this.routed, payloads),
    });
    this.routed = { onEvent: (payload, final) => this.waiting.event(payload, final) };
  }

  /**
   * Subscribed with nothing awaited, so a message the caller sends in the same turn (the
   * dispatch) joins the subscription in one write to the bus.
   */
  static followNow(deps: RoutedWaitDeps, runId: string, follower: RunFollower, opts: FollowOptions): RoutedWait {
    const wait = new RoutedWait(deps, runId, follower, opts);
    wait.unfollow = deps.router.followNow(runId, wait.routed, { startedBy: opts.startedBy, sessionKey: opts.sessionKey });
    return wait;
  }

  /** Subscribed and flushed: nothing published from now on is missed. */
  static async follow(deps: RoutedWaitDeps, runId: string, follower: RunFollower, opts: FollowOptions): Promise<RoutedWait> {
    const wait = new RoutedWait(deps, runId, follower, opts);
    wait.unfollow = await deps.router.follow(runId, wait.routed, { startedBy: opts.startedBy, sessionKey: opts.sessionKey });
    return wait;
  }

  /** The runId is the caller's: its socket hears the run's events from now on. */
  admit(): void {
    this.routed.targetId = this.follower.targetId;
    this.waiting.admit();
  }

  /** The dispatch failed and `final` recorded the run's end. */
  dispatchFailed(final: RunRecord): void {
    this.waiting.dispatchFailed(final);
  }

  /** The run's final record, or null when `timeoutMs` passes first. */
  result(timeoutMs: number): Promise<RunRecord | null> {
    return this.waiting.result(timeoutMs);
  }

  close(): void {
    this.waiting.close();
    const unfollow = this.unfollow;
    this.unfollow = undefined;
    // The answer goes out first: unsubscribing is a bus write the caller need not wait for.
    if (unfollow) setImmediate(unfollow);
  }
}
