import { type CronFields, parseCronFields } from "./cron-fields.js";
import { instantOf, isTimeZone, wallOf } from "./wall-clock.js";

/**
 * A cron job's schedule (`cron.jobs[].schedule`), one of:
 * - a cron expression: 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds
 *   first, read in the job's timezone;
 * - "every <n><s|m|h|d>": every n units, at the multiples of that period since the Unix epoch
 *   (so every replica computes the same firings; "every 1d" fires at 00:00 UTC);
 * - an ISO 8601 date-time: one firing then (without an offset, in the job's timezone).
 */
export type Schedule =
  | { kind: "cron"; fields: CronFields; timezone: string }
  | { kind: "every"; everyMs: number }
  | { kind: "at"; at: number };

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const EVERY = /^every\s+(\d{1,9})\s*([smhd])$/i;
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?(Z|[+-]\d{2}:?\d{2})?$/;
/** Longest a cron search looks ahead: an expression that never matches ("0 0 30 2 *") ends it. */
const SEARCH_YEARS = 8;

/** Parses a schedule; throws an Error whose message says what is wrong. */
export function parseSchedule(text: string, timezone = "UTC"): Schedule {
  if (!isTimeZone(timezone)) throw new Error(`unknown timezone "${timezone}" (an IANA name such as "Europe/Berlin")`);
  const trimmed = text.trim();
  const every = EVERY.exec(trimmed);
  if (every !== null) {
    const everyMs = Number(every[1]) * UNIT_MS[every[2]!.toLowerCase() as keyof typeof UNIT_MS];
    if (everyMs < 1_000) throw new Error(`"${text}": the period must be at least 1s`);
    return { kind: "every", everyMs };
  }
  if (/^\d{4}-/.test(trimmed)) return { kind: "at", at: parseIsoTime(trimmed, timezone) };
  if (/^every\b/i.test(trimmed)) throw new Error(`"${text}": write "every <n><unit>" with unit s, m, h or d, e.g. "every 15m"`);
  return { kind: "cron", fields: parseCronFields(trimmed), timezone };
}

function parseIsoTime(text: string, timezone: string): number {
  const m = ISO.exec(text);
  if (m === null) throw new Error(`"${text}" is not an ISO 8601 date-time (e.g. 2026-12-24T18:00:00Z)`);
  const [year, month, day, hour, minute, second = "0", millis = "0"] = m.slice(1, 8).map((part) => part ?? "0");
  const wall = Date.UTC(+year!, +month! - 1, +day!, +hour!, +minute!, +second, +millis.padEnd(3, "0"));
  const back = new Date(wall);
  if (back.getUTCDate() !== +day! || back.getUTCMonth() !== +month! - 1 || +hour! > 23 || +minute! > 59 || +second > 59) {
    throw new Error(`"${text}" is not a valid date-time`);
  }
  const offset = m[8];
  if (offset === undefined) return instantOf(wall, timezone);
  if (offset === "Z") return wall;
  const sign = offset.startsWith("-") ? -1 : 1;
  const digits = offset.slice(1).replace(":", "");
  return wall - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
}

/** The first firing strictly after `afterMs`, or null when there is none (a one-shot in the past). */
export function nextFiring(schedule: Schedule, afterMs: number): number | null {
  switch (schedule.kind) {
    case "at":
      return schedule.at > afterMs ? schedule.at : null;
    case "every":
      return (Math.floor(afterMs / schedule.everyMs) + 1) * schedule.everyMs;
    case "cron":
      return nextCronFiring(schedule.fields, schedule.timezone, afterMs);
  }
}

/** The last firing at or before `atMs`, or null when there is none after `afterMs` (exclusive). */
export function lastFiring(schedule: Schedule, afterMs: number, atMs: number): number | null {
  if (schedule.kind === "at") return schedule.at > afterMs && schedule.at <= atMs ? schedule.at : null;
  if (schedule.kind === "every") {
    const last = Math.floor(atMs / schedule.everyMs) * schedule.everyMs;
    return last > afterMs ? last : null;
  }
  // Cron has no cheap way back: walk forward over a window ending at `atMs`, widened until it
  // holds a firing or reaches `afterMs`, so a long gap costs a few short walks, not one per firing.
  for (const span of LOOK_BACK_MS) {
    const from = Math.max(afterMs, atMs - span);
    let found: number | null = null;
    for (let at = nextFiring(schedule, from); at !== null && at <= atMs; at = nextFiring(schedule, at)) found = at;
    if (found !== null || from === afterMs) return found;
  }
  return null;
}

/** The windows lastFiring looks back over: the last always reaches past any cron search. */
const LOOK_BACK_MS = [60_000, 3_600_000, UNIT_MS.d, 32 * UNIT_MS.d, 367 * UNIT_MS.d, (SEARCH_YEARS + 1) * 366 * UNIT_MS.d];

/**
 * The wall-clock search runs on local time written as if it were UTC (no DST there), and each
 * match is turned into an instant: a local time skipped by a DST change fires at the same
 * distance past the change; one that happens twice fires at its first occurrence only.
 */
function nextCronFiring(fields: CronFields, timezone: string, afterMs: number): number | null {
  const startWall = wallOf(afterMs, timezone);
  let wall = Math.floor(startWall / 1000) * 1000 + 1000;
  const limit = startWall + SEARCH_YEARS * 366 * UNIT_MS.d;
  for (;;) {
    const match = fields.nextWall(wall, limit);
    if (match === null) return null;
    const at = instantOf(match, timezone);
    if (at > afterMs) return at;
    wall = match + 1000;
  }
}
