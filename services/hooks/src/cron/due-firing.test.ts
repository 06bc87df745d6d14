import { parseSchedule } from "@gw/config";
import { describe, expect, it } from "vitest";
import { dueFiring, initialCursor, nextFireAt, ON_TIME_MS } from "./due-firing.js";

const at = (iso: string) => Date.parse(iso);
const everyMinute = parseSchedule("every 1m");
const cursor = at("2026-03-01T10:00:00Z");
/** Five firings missed: 10:01 to 10:05, now just after the last. */
const now = at("2026-03-01T10:05:00.300Z");

describe("what a job's firings do now, by catchUp", () => {
  it("all: the first missed firing, then the next, each its own step", () => {
    expect(dueFiring(everyMinute, "all", cursor, now)).toEqual({ fireAt: at("2026-03-01T10:01:00Z"), cursor: at("2026-03-01T10:01:00Z") });
    expect(dueFiring(everyMinute, "all", at("2026-03-01T10:05:00Z"), now)).toBeNull();
  });

  it("last: the latest due firing, the ones before it skipped", () => {
    expect(dueFiring(everyMinute, "last", cursor, now)).toEqual({ fireAt: at("2026-03-01T10:05:00Z"), cursor: at("2026-03-01T10:05:00Z") });
  });

  it("none: the latest firing only while it is on time; a missed one moves the cursor and runs nothing", () => {
    expect(dueFiring(everyMinute, "none", cursor, now)).toEqual({ fireAt: at("2026-03-01T10:05:00Z"), cursor: at("2026-03-01T10:05:00Z") });
    const late = at("2026-03-01T10:05:00Z") + ON_TIME_MS + 1;
    expect(dueFiring(everyMinute, "none", cursor, late)).toEqual({ fireAt: null, cursor: at("2026-03-01T10:05:00Z") });
  });

  it("nothing before the next firing", () => {
    expect(dueFiring(everyMinute, "last", at("2026-03-01T10:05:00Z"), now)).toBeNull();
    expect(nextFireAt(everyMinute, at("2026-03-01T10:05:00Z"))).toBe(at("2026-03-01T10:06:00Z"));
  });

  it("a one-shot starts with no cursor, so a time already past fires once, and never after", () => {
    const once = parseSchedule("2020-01-01T00:00:00Z");
    const start = initialCursor(once, now);
    expect(start).toBeNull();
    for (const catchUp of ["last", "all"] as const) {
      expect(dueFiring(once, catchUp, start, now)).toEqual({ fireAt: at("2020-01-01T00:00:00Z"), cursor: at("2020-01-01T00:00:00Z") });
      expect(dueFiring(once, catchUp, at("2020-01-01T00:00:00Z"), now)).toBeNull();
    }
    // catchUp none: long past is missed.
    expect(dueFiring(once, "none", start, now)).toEqual({ fireAt: null, cursor: at("2020-01-01T00:00:00Z") });
    expect(nextFireAt(once, at("2020-01-01T00:00:00Z"))).toBeNull();
  });

  it("a recurring job starts at its creation: nothing before it is due", () => {
    expect(initialCursor(everyMinute, now)).toBe(now);
    expect(dueFiring(everyMinute, "all", now, now)).toBeNull();
  });
});
