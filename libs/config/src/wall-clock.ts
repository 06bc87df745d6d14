/**
 * Local wall-clock time in an IANA timezone, through Intl (no timezone data of our own). A "wall"
 * is the local date and time written as if it were UTC milliseconds: arithmetic on it has no DST.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let found = formatters.get(timezone);
  if (found === undefined) {
    found = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timezone, found);
  }
  return found;
}

export function isTimeZone(timezone: string): boolean {
  try {
    formatter(timezone);
    return true;
  } catch {
    return false;
  }
}

/** The local time of instant `at` in `timezone`, as a wall. */
export function wallOf(at: number, timezone: string): number {
  if (timezone === "UTC") return at;
  const parts: Record<string, number> = {};
  for (const part of formatter(timezone).formatToParts(at)) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  const millis = ((at % 1000) + 1000) % 1000;
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!, millis);
}

const HALF_DAY_MS = 43_200_000;

/**
 * The instant a wall names in `timezone`. Offsets are read half a day either side, which finds
 * both of a DST change. A wall that happens twice (clocks set back) gives its first instant; one
 * that never happens (clocks set forward) gives the instant as far past the change as the wall is
 * past the skipped hour's start, e.g. 02:30 in a skipped 02:00-03:00 is 03:30.
 */
export function instantOf(wall: number, timezone: string): number {
  if (timezone === "UTC") return wall;
  const before = wall - (wallOf(wall - HALF_DAY_MS, timezone) - (wall - HALF_DAY_MS));
  const after = wall - (wallOf(wall + HALF_DAY_MS, timezone) - (wall + HALF_DAY_MS));
  const valid = [before, after].filter((at) => wallOf(at, timezone) === wall);
  return valid.length > 0 ? Math.min(...valid) : before;
}
