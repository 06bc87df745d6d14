import { randomUUID } from "node:crypto";
import { parseSchedule, type Schedule } from "@gw/config";
import { isFinal } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { Bus, Subjects } from "@gw/bus";
import { endRun, type RunRegistry } from "@gw/runs";
import { type FastStore, leaseTiming, withLease } from "@gw/store";
import type { RunDispatcher } from "../run-dispatch.js";
import { dueFiring, initialCursor, nextFireAt } from "./due-firing.js";
import { firingRun, firingSender } from "./firing-ids.js";
import type { BookedJob, CronJobBook } from "./job-book.js";
import type { JobState, JobStates } from "./job-state.js";

export interface CronSchedulerDeps {
  book: CronJobBook;
  states: JobStates;
  dispatcher: RunDispatcher;
  registry: RunRegistry;
  /** To end, for everyone following it, a run whose runner died (nobody waits on a scheduled run). */
  bus: Bus;
  subjects: Subjects;
  store: FastStore;
  logger: Logger;
}

/** A job's firing is started under this lease; a holder that died is taken over once it lapses. */
const FIRING_LEASE = leaseTiming(5_000);
/** Replicas look at the jobs at least this often (jobs added elsewhere, results of runs). */
const MAX_SLEEP_MS = 1_000;
const MIN_SLEEP_MS = 20;
/** A run whose record is gone this long after it was fired has an outcome no one can know any more. */
const LOST_AFTER_MS = 3_600_000;

/** The definition a job's cursor counts for: a new schedule, timezone or incarnation starts afresh. */
export const definitionOf = ({ job, generation }: BookedJob) => `${generation}\n${job.schedule}\n${job.timezone ?? "UTC"}`;

export const scheduleOf = ({ job }: BookedJob): Schedule => parseSchedule(job.schedule, job.timezone);

export function sessionKeyOf(booked: BookedJob): string {
  return booked.job.sessionKey ?? `cron:${booked.job.id}`;
}

/**
 * Runs on every hooks replica: wakes at the next firing (at least once a second), and for each
 * due firing starts exactly one run across all replicas. The firing is started under the job's
 * lease in the FastStore (Redis in distributed mode): the holder reads the job's state again,
 * dispatches the run, whose id follows from the job and the scheduled time, then moves the
 * job's cursor past it. A holder that dies between the two leaves the cursor where it was; the
 * next holder dispatches the same run again, which the run registry takes as already there.
 */
export class CronScheduler {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private pass: Promise<void> = Promise.resolve();

  constructor(private readonly deps: CronSchedulerDeps) {}

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    // A little jitter, so replicas do not all reach the store in the same millisecond.
    this.timer = setTimeout(() => {
      this.pass = this.tick();
    }, delayMs + Math.floor(Math.random() * 10));
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    let sleepMs = MAX_SLEEP_MS;
    try {
      for (const booked of await this.deps.book.all()) {
        const next = await this.visit(booked).catch((err: unknown) => {
          this.deps.logger.warn({ err, job: booked.job.id }, "cron job pass failed; the next pass retries");
          return null;
        });
        if (next !== null) sleepMs = Math.min(sleepMs, Math.max(MIN_SLEEP_MS, next - Date.now()));
      }
    } catch (err) {
      this.deps.logger.warn({ err }, "cannot read the cron jobs; the next pass retries");
    } finally {
      this.schedule(sleepMs);
    }
  }

  /** Fires what is due of one job and records its last run's outcome; answers its next firing. */
  private async visit(booked: BookedJob): Promise<number | null> {
    const schedule = scheduleOf(booked);
    let state = await this.current(booked, schedule);
    if (state.lastResult === "running" && state.lastRunId !== undefined) state = await this.recordOutcome(booked.job.id, state);
    if (!booked.job.enabled) {
      await this.skipWhileDisabled(booked, schedule, state);
      return null;
    }
    if (dueFiring(schedule, booked.job.catchUp, state.cursor, Date.now()) !== null) {
      await withLease(this.deps.store.leases, `cron:fire:{${booked.job.id}}`, randomUUID(), FIRING_LEASE, async (lease) => {
        // Other replicas may have moved on while this one waited: only the state read under the lease counts.
        for (;;) {
          const fresh = await this.current(booked, schedule);
          const due = dueFiring(schedule, booked.job.catchUp, fresh.cursor, Date.now());
          if (due === null || !lease.held()) return;
          state = await this.step(booked, due);
        }
      });
    }
    return nextFireAt(schedule, state.cursor);
  }

  /** Firings that pass while a job is disabled are not missed ones: enabling it again does not catch them up. */
  private async skipWhileDisabled(booked: BookedJob, schedule: Schedule, state: JobState): Promise<void> {
    const passed = dueFiring(schedule, "last", state.cursor, Date.now());
    if (passed === null) return;
    await this.deps.states.change(booked.job.id, (now) =>
      now === null || now.definition !== state.definition || (now.cursor ?? -Infinity) >= passed.cursor ? undefined : { ...now, cursor: passed.cursor },
    );
  }

  /** The job's state, started (or started afresh for a new definition) when needed. */
  private async current(booked: BookedJob, schedule: Schedule): Promise<JobState> {
    const definition = definitionOf(booked);
    const state = await this.deps.states.change(booked.job.id, (now) =>
      now !== null && now.definition === definition ? undefined : { definition, cursor: initialCursor(schedule, Date.now()) },
    );
    return state!;
  }

  /** Starts the due firing's run (if it runs) and moves the cursor past it. */
  private async step(booked: BookedJob, due: { fireAt: number | null; cursor: number }): Promise<JobState> {
    const { job } = booked;
    let runId: string | undefined;
    if (due.fireAt !== null) {
      const ids = firingRun(job.id, booked.generation, due.fireAt);
      const outcome = await this.dispatch(booked, ids, firingSender(job.id, due.fireAt), false);
      runId = ids.runId;
      this.deps.logger.info({ job: job.id, runId, scheduledAt: new Date(due.fireAt).toISOString(), outcome }, "cron job fired");
    } else {
      this.deps.logger.info({ job: job.id, skippedTo: new Date(due.cursor).toISOString() }, "cron job missed a firing (catchUp none)");
    }
    const state = await this.deps.states.change(job.id, (now) => {
      if (now === null || now.definition !== definitionOf(booked) || (now.cursor ?? -Infinity) >= due.cursor) return undefined;
      return runId === undefined
        ? { ...now, cursor: due.cursor }
        : { ...fired(now, runId, Date.now()), cursor: due.cursor, lastScheduledAt: due.fireAt! };
    });
    return state!;
  }

  /** `cron.run`: one run now, outside the schedule (the cursor stays). */
  async runNow(booked: BookedJob): Promise<string> {
    const ids = { runId: randomUUID(), nonce: randomUUID() };
    await this.current(booked, scheduleOf(booked));
    await this.dispatch(booked, ids, firingSender(booked.job.id, "now"), true);
    await this.deps.states.change(booked.job.id, (now) => (now === null ? undefined : fired(now, ids.runId, Date.now())));
    return ids.runId;
  }

  private dispatch(booked: BookedJob, ids: { runId: string; nonce: string }, sender: string, endOnFailure: boolean) {
    const { job } = booked;
    const request = this.deps.dispatcher.plan({
      ...ids,
      sessionKey: sessionKeyOf(booked),
      agentId: job.agentId,
      message: job.message,
      sender,
      deliver: job.deliver !== undefined,
      channel: job.deliver?.channel,
      to: job.deliver?.to,
    });
    return this.deps.dispatcher.dispatch(request, { endOnFailure });
  }

  /**
   * The last run's outcome, once it has one: any replica records it, so a firing whose replica
   * died while the run went on still gets its result. A run whose runner died is ended here (no
   * client waits on it to notice), with the lifecycle error its followers would get.
   */
  private async recordOutcome(id: string, state: JobState): Promise<JobState> {
    const runId = state.lastRunId!;
    const { registry } = this.deps;
    const record = await registry.get(runId);
    let outcome: Pick<JobState, "lastResult" | "lastError"> | undefined;
    if (record !== null && isFinal(record.state)) {
      outcome = record.state === "done" ? { lastResult: "ok" } : { lastResult: "error", lastError: record.error?.message ?? "the run failed" };
    } else if (record?.state === "running" && !(await registry.heartbeatAlive(runId))) {
      // The runner clears the heartbeat as it records the outcome: only a record still not final after that is a dead runner's.
      const again = await registry.get(runId);
      if (again !== null && !isFinal(again.state)) {
        const message = "the runner running it stopped";
        await endRun(this.deps, again, "UNAVAILABLE", message);
        outcome = { lastResult: "error", lastError: message };
      }
    } else if (record === null && Date.now() - (state.lastFiredAt ?? 0) > LOST_AFTER_MS) {
      outcome = { lastResult: "error", lastError: "the run's outcome is no longer known" };
    }
    if (outcome === undefined) return state;
    const result = outcome;
    const stored = await this.deps.states.change(id, (now) => {
      if (now === null || now.lastRunId !== runId || now.lastResult !== "running") return undefined;
      const { lastError: _dropped, ...rest } = now;
      return { ...rest, ...result };
    });
    return stored ?? state;
  }
}

function fired(state: JobState, runId: string, at: number): JobState {
  const { lastError: _dropped, ...rest } = state;
  return { ...rest, lastRunId: runId, lastFiredAt: at, lastResult: "running" };
}
