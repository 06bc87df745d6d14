import { type CronCatchUp } from "@gw/contracts";
import { lastFiring, nextFiring, type Schedule } from "@gw/config";

/** catchUp "none": a firing this late is a missed one, not a late one (a replica's pause, a slow store). */
export const ON_TIME_MS = 15_000;

/** What is due now: the firing to start (null: skip to `cursor` without a run), and the cursor after it. */
export interface Due {
  fireAt: number | null;
  cursor: number;
}

/**
 * The one step a job's firings take now, from the cursor (the last firing dealt with; null: none,
 * which only one-shots start from so that a time already past still fires once):
 * - all: the first firing after the cursor, if it is due; the next step takes the one after;
 * - last: the latest due firing; those before it are skipped;
 * - none: the latest due firing if it is on time, else nothing runs and the cursor moves past it.
 * Null when nothing is due.
 */
export function dueFiring(schedule: Schedule, catchUp: CronCatchUp, cursor: number | null, now: number): Due | null {
  const after = cursor ?? Number.NEGATIVE_INFINITY;
  if (catchUp === "all") {
    const first = nextFiring(schedule, after);
    return first === null || first > now ? null : { fireAt: first, cursor: first };
  }
  const last = lastFiring(schedule, after, now);
  if (last === null) return null;
  if (catchUp === "last" || now - last <= ON_TIME_MS) return { fireAt: last, cursor: last };
  return { fireAt: null, cursor: last };
}

/** Where a job's cursor starts: one-shots before their time (null), the rest at `now`. */
export const initialCursor = (schedule: Schedule, now: number): number | null => (schedule.kind === "at" ? null : now);

/** The next firing after the cursor, or none (a one-shot done). */
export function nextFireAt(schedule: Schedule, cursor: number | null): number | null {
  return nextFiring(schedule, cursor ?? Number.NEGATIVE_INFINITY);
}
