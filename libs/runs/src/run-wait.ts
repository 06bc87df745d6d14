import type { AgentEventPayload, RunRecord } from "@gw/contracts";
import { isTerminalEvent } from "./agent-events.js";
import type { RunVerdict } from "./runner-death.js";

/**
 * Waiting for one run to end, as a state machine without I/O: inputs in, effects out. The
 * driver (run-waiting.ts) feeds it bus events, timer ticks and registry answers, and carries
 * out what it returns. Phases:
 *
 *   admitting --admitted--> following --quiet or deadline--> checking
 *   checking --live--> following | --final--> settling | --dead--> ending --ended--> settling
 *   settling --terminal event or settle time--> done
 *   any --terminal event with its final record, or a failed dispatch--> done
 *   any --abandon--> done (no effects: the caller stopped waiting)
 *
 * - admitting: subscribed, but the runId is not yet known to be ours (the registration has not
 *   answered). Events that beat the registration are kept and handed over, in order, once
 *   admitted; never if it fails (the driver just stops).
 * - following: events flow to the follower. The terminal event carries the run's final record,
 *   which ends the wait with no registry read. A run that sends nothing for `pollMs` is checked.
 * - checking: the runner-death detector reads the registry (runner-death.ts).
 * - ending: the runner died; the driver ends the run for it (end-run.ts).
 * - settling: the registry says the run is over, but its last events may still be on their way:
 *   wait for the terminal event up to `settleMs`, so the follower's socket has every event
 *   before the answer. A run that ended well before the wait began has nothing in flight.
 */

export interface RunWaitTimings {
  /** A run quiet this long is checked in the registry (the runner-death detection step). */
  pollMs: number;
  /** How long a run the registry shows as over may still be delivering its last events. */
  settleMs: number;
  /** Runner and edge clocks may differ by this much. */
  skewMs: number;
}

export type WaitInput =
  /** The runId is ours: hand over what arrived early, deliver from now on. */
  | { type: "admitted"; at: number }
  | { type: "event"; payload: AgentEventPayload; final: RunRecord | undefined; at: number }
  /** The run could not be dispatched; `final` is the error it was ended with. */
  | { type: "dispatch-failed"; final: RunRecord }
  /** The wait proper begins (after the dispatch): from now on it is bounded by `deadline`. */
  | { type: "start"; at: number; deadline: number }
  | { type: "tick"; at: number }
  | { type: "checked"; verdict: RunVerdict; at: number }
  /** The driver ended the run for its dead runner. */
  | { type: "ended"; record: RunRecord; at: number }
  /** The caller stopped waiting (its registration failed, or the wait itself did): nothing more. */
  | { type: "abandon" };

export type WaitEffect =
  | { type: "deliver"; payload: AgentEventPayload; final: RunRecord | undefined }
  /** Events that arrived before admission, for the follower's socket, in order. */
  | { type: "replay"; payloads: AgentEventPayload[] }
  | { type: "check" }
  | { type: "end-run"; record: RunRecord }
  | { type: "wake-at"; at: number }
  /** The run's final record, or null: the deadline passed with the run still live. */
  | { type: "finish"; result: RunRecord | null }
  /** The registry no longer knows the run (its record expired). */
  | { type: "expired" };

type Phase =
  | { name: "admitting"; early: Array<{ payload: AgentEventPayload; final: RunRecord | undefined; at: number }> }
  | { name: "following" }
  | { name: "checking"; last: boolean }
  | { name: "ending" }
  | { name: "settling"; record: RunRecord; until: number }
  | { name: "done" };

export type RunWaitPhase = Phase["name"];

export class RunWait {
  private phase: Phase = { name: "admitting", early: [] };
  private started = false;
  private deadline = Number.POSITIVE_INFINITY;
  /** When the run last proved alive: an event, or a check that found it live. */
  private aliveAt: number;
  /** The terminal event was seen (without a final record, or while the registry was read). */
  private terminalSeen = false;

  constructor(
    private readonly timings: RunWaitTimings,
    /** When the subscription was made: a run that ended well before has no events in flight. */
    private readonly followedAt: number,
    /** Check the registry as soon as the wait starts: the run may have ended before we followed. */
    private readonly checkFirst: boolean,
  ) {
    this.aliveAt = checkFirst ? Number.NEGATIVE_INFINITY : followedAt;
  }

  get current(): RunWaitPhase {
    return this.phase.name;
  }

  step(input: WaitInput): WaitEffect[] {
    if (this.phase.name === "done") return [];
    switch (input.type) {
      case "admitted":
        return this.admit(input.at);
      case "event":
        if (this.phase.name === "admitting") {
          this.phase.early.push(input);
          return [];
        }
        return this.event(input.payload, input.final, input.at);
      case "dispatch-failed":
        return this.finish(input.final);
      case "start":
        this.started = true;
        this.deadline = input.deadline;
        return this.phase.name === "following" ? this.watch(input.at) : [];
      case "tick":
        return this.tick(input.at);
      case "checked":
        return this.phase.name === "checking" ? this.checked(input.verdict, input.at) : [];
      case "ended":
        return this.phase.name === "ending" ? this.settle(input.record, input.at) : [];
      case "abandon":
        this.phase = { name: "done" };
        return [];
    }
  }

  private admit(at: number): WaitEffect[] {
    if (this.phase.name !== "admitting") return [];
    const early = this.phase.early;
    this.phase = { name: "following" };
    const effects: WaitEffect[] = [];
    if (early.length > 0) effects.push({ type: "replay", payloads: early.map((e) => e.payload) });
    for (const e of early) effects.push(...this.event(e.payload, e.final, e.at));
    // Admitted after the wait started (not how the client does it, but a valid order).
    if (this.started && this.phase.name === "following") effects.push(...this.watch(at));
    return effects;
  }

  private event(payload: AgentEventPayload, final: RunRecord | undefined, at: number): WaitEffect[] {
    if (this.phase.name === "done") return [];
    this.aliveAt = Math.max(this.aliveAt, at);
    const effects: WaitEffect[] = [{ type: "deliver", payload, final }];
    if (!isTerminalEvent(payload)) return effects;
    this.terminalSeen = true;
    if (this.phase.name === "settling") return [...effects, ...this.finish(this.phase.record)];
    if (final !== undefined) return [...effects, ...this.finish(final)];
    // A terminal event without its record (an older runner): the registry has the outcome.
    if (this.phase.name === "following" && this.started) return [...effects, ...this.check(false)];
    return effects;
  }

  /** Following: check now if due, else wake when the run will have been quiet long enough. */
  private watch(at: number): WaitEffect[] {
    if (at >= this.deadline) return this.check(true);
    if (this.terminalSeen || at - this.aliveAt >= this.timings.pollMs) return this.check(false);
    return [{ type: "wake-at", at: Math.min(this.aliveAt + this.timings.pollMs, this.deadline) }];
  }

  private tick(at: number): WaitEffect[] {
    if (this.phase.name === "following" && this.started) return this.watch(at);
    if (this.phase.name === "settling") {
      // Node may fire a timer a millisecond before Date.now() reaches its due time: wake again.
      return at >= this.phase.until ? this.finish(this.phase.record) : [{ type: "wake-at", at: this.phase.until }];
    }
    return [];
  }

  private check(last: boolean): WaitEffect[] {
    this.phase = { name: "checking", last };
    return [{ type: "check" }];
  }

  private checked(verdict: RunVerdict, at: number): WaitEffect[] {
    const last = (this.phase.name === "checking" && this.phase.last) || at >= this.deadline;
    switch (verdict.kind) {
      case "gone":
        this.phase = { name: "done" };
        return [{ type: "expired" }];
      case "final":
        return this.settle(verdict.record, at);
      case "dead":
        this.phase = { name: "ending" };
        return [{ type: "end-run", record: verdict.record }];
      case "live":
        if (last) return this.finish(null);
        this.phase = { name: "following" };
        this.aliveAt = Math.max(this.aliveAt, at);
        return [{ type: "wake-at", at: Math.min(this.aliveAt + this.timings.pollMs, this.deadline) }];
    }
  }

  private settle(record: RunRecord, at: number): WaitEffect[] {
    if (this.terminalSeen || record.updatedAt < this.followedAt - this.timings.skewMs) return this.finish(record);
    const until = at + this.timings.settleMs;
    this.phase = { name: "settling", record, until };
    return [{ type: "wake-at", at: until }];
  }

  private finish(result: RunRecord | null): WaitEffect[] {
    this.phase = { name: "done" };
    return [{ type: "finish", result }];
  }
}
