import { type AgentEventPayload, GatewayError, type RunRecord } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { type EndRunDeps, endRun } from "./end-run.js";
import { RunWait, type RunWaitTimings, type WaitEffect, type WaitInput } from "./run-wait.js";
import { inspectRun } from "./runner-death.js";

export interface RunWaitingDeps extends EndRunDeps {
  logger: Logger;
  timings: RunWaitTimings;
}

/** Where a waiting's run events go; its caller owns the subscription that brings them. */
export interface RunWaitListener {
  /** Each event, once the run is admitted; `final` is the run's record, with its terminal event. */
  deliver?: (payload: AgentEventPayload, final: RunRecord | undefined) => void;
  /** The events that arrived before admission, in order, as it is admitted. */
  replay?: (payloads: AgentEventPayload[]) => void;
}

/**
 * The driver of one wait on one run: carries out what the RunWait machine (run-wait.ts) returns
 * (the registry read of the runner-death detector, ending a run whose runner died, a timer)
 * and feeds it the answers. Its caller subscribes to the run's events and hands each to
 * `event`, `admit`s the run once the runId is known to be its own, awaits `result()`, and
 * always `close()`s it.
 */
export class RunWaiting {
  private readonly wait: RunWait;
  private timer: NodeJS.Timeout | undefined;
  private readonly settled: Promise<RunRecord | null>;
  private resolve!: (result: RunRecord | null) => void;
  private reject!: (err: unknown) => void;

  constructor(
    private readonly deps: RunWaitingDeps,
    private readonly runId: string,
    /** Check the registry as soon as the wait starts: the run may have ended before it was followed. */
    opts: { checkFirst: boolean },
    private readonly listener: RunWaitListener = {},
  ) {
    this.wait = new RunWait(deps.timings, Date.now(), opts.checkFirst);
    this.settled = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Never an unhandled rejection while the caller is still dispatching.
    this.settled.catch(() => undefined);
  }

  /** One of the run's events, as it arrives. */
  event(payload: AgentEventPayload, final: RunRecord | undefined): void {
    this.feed({ type: "event", payload, final, at: Date.now() });
  }

  /** The runId is the caller's: its events are delivered from now on. */
  admit(): void {
    this.feed({ type: "admitted", at: Date.now() });
  }

  /** The dispatch failed and `final` recorded the run's end. */
  dispatchFailed(final: RunRecord): void {
    this.feed({ type: "dispatch-failed", final });
  }

  /**
   * The run's final record, or null when `timeoutMs` passes first; NOT_FOUND when the registry
   * no longer knows the run.
   */
  result(timeoutMs: number): Promise<RunRecord | null> {
    const at = Date.now();
    this.feed({ type: "start", at, deadline: at + timeoutMs });
    return this.settled;
  }

  close(): void {
    clearTimeout(this.timer);
    this.wait.step({ type: "abandon" });
  }

  private feed(input: WaitInput): void {
    for (const effect of this.wait.step(input)) this.apply(effect);
  }

  private apply(effect: WaitEffect): void {
    switch (effect.type) {
      case "deliver":
        this.listener.deliver?.(effect.payload, effect.final);
        return;
      case "replay":
        this.listener.replay?.(effect.payloads);
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
