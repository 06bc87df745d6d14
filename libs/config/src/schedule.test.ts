import { describe, expect, it } from "vitest";
import { lastFiring, nextFiring, parseSchedule, type Schedule } from "./schedule.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The next `count` firings after `from`. */
function firings(schedule: Schedule, from: string, count: number): Array<string | null> {
  const out: Array<string | null> = [];
  let cursor = at(from);
  for (let i = 0; i < count; i++) {
    const next = nextFiring(schedule, cursor);
    out.push(iso(next));
    if (next === null) break;
    cursor = next;
  }
  return out;
}

describe("cron expressions", () => {
  it("reads five fields as minute hour day month weekday, firing at second 0", () => {
    expect(firings(parseSchedule("30 9 * * *"), "2026-03-01T10:00:00Z", 2)).toEqual(["2026-03-02T09:30:00.000Z", "2026-03-03T09:30:00.000Z"]);
  });

  it("reads a sixth field as seconds, first", () => {
    expect(firings(parseSchedule("*/20 * * * * *"), "2026-03-01T10:00:05Z", 3)).toEqual([
      "2026-03-01T10:00:20.000Z",
      "2026-03-01T10:00:40.000Z",
      "2026-03-01T10:01:00.000Z",
    ]);
  });

  it("takes lists, ranges, steps and names", () => {
    const s = parseSchedule("0 8-10/2,17 * jan mon-fri");
    expect(firings(s, "2026-01-02T09:00:00Z", 4)).toEqual([
      "2026-01-02T10:00:00.000Z",
      "2026-01-02T17:00:00.000Z",
      // Saturday and Sunday skipped.
      "2026-01-05T08:00:00.000Z",
      "2026-01-05T10:00:00.000Z",
    ]);
    expect(firings(parseSchedule("0 0 1 */6 *"), "2026-02-01T00:00:00Z", 2)).toEqual(["2026-07-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]);
  });

  it("matches either day field when both are given, and treats 7 as Sunday", () => {
    // The 13th, or any Friday (March 2026: Friday the 6th, the 13th is a Friday too, then the 20th).
    expect(firings(parseSchedule("0 12 13 * 5"), "2026-03-01T00:00:00Z", 3)).toEqual([
      "2026-03-06T12:00:00.000Z",
      "2026-03-13T12:00:00.000Z",
      "2026-03-20T12:00:00.000Z",
    ]);
    expect(firings(parseSchedule("0 0 * * 7"), "2026-03-02T00:00:00Z", 1)).toEqual(["2026-03-08T00:00:00.000Z"]);
  });

  it("finds a date that comes round rarely, and none for one that never does", () => {
    expect(firings(parseSchedule("0 0 29 2 *"), "2026-03-01T00:00:00Z", 1)).toEqual(["2028-02-29T00:00:00.000Z"]);
    expect(nextFiring(parseSchedule("0 0 30 2 *"), at("2026-01-01T00:00:00Z"))).toBeNull();
  });

  it("refuses what is not a cron expression, saying why", () => {
    expect(() => parseSchedule("* * * *")).toThrow(/has 4 fields/);
    expect(() => parseSchedule("60 * * * *")).toThrow(/minute: 60 is outside 0-59/);
    expect(() => parseSchedule("* * * foo *")).toThrow(/month: "foo" is not a number or a name/);
    expect(() => parseSchedule("5-1 * * * *")).toThrow(/runs backwards/);
    expect(() => parseSchedule("*/0 * * * *")).toThrow(/positive whole number/);
    expect(() => parseSchedule("0 9 * * *", "Mars/Olympus")).toThrow(/unknown timezone/);
  });
});

describe("cron expressions in a timezone", () => {
  it("fire at the local time, whatever the offset of the day", () => {
    const s = parseSchedule("0 9 * * *", "Europe/Berlin");
    // 09:00 CET is 08:00Z in winter, 09:00 CEST is 07:00Z in summer.
    expect(firings(s, "2026-03-27T12:00:00Z", 3)).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z"]);
  });

  it("fire a local time skipped by the spring change once, as far past the change", () => {
    // Europe/Berlin skips 02:00-03:00 on 2026-03-29: 02:30 fires at 03:30 CEST (01:30Z).
    expect(firings(parseSchedule("30 2 * * *", "Europe/Berlin"), "2026-03-28T12:00:00Z", 2)).toEqual([
      "2026-03-29T01:30:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
  });

  it("fire a local time repeated by the autumn change once, at its first occurrence", () => {
    // America/New_York repeats 01:00-02:00 on 2026-11-01: 01:30 EDT is 05:30Z, 01:30 EST would be 06:30Z.
    expect(firings(parseSchedule("30 1 * * *", "America/New_York"), "2026-10-31T12:00:00Z", 2)).toEqual([
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ]);
    // Every 30 minutes through the repeated hour: each wall time once.
    expect(firings(parseSchedule("*/30 * * * *", "America/New_York"), "2026-11-01T04:45:00Z", 4)).toEqual([
      "2026-11-01T05:00:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-01T07:00:00.000Z",
      "2026-11-01T07:30:00.000Z",
    ]);
  });
});

describe("every <n><unit>", () => {
  it("fires at the multiples of the period since the epoch, the same on every replica", () => {
    expect(firings(parseSchedule("every 15m"), "2026-03-01T10:07:12Z", 2)).toEqual(["2026-03-01T10:15:00.000Z", "2026-03-01T10:30:00.000Z"]);
    expect(firings(parseSchedule("every 1s"), "2026-03-01T10:00:00.400Z", 2)).toEqual(["2026-03-01T10:00:01.000Z", "2026-03-01T10:00:02.000Z"]);
    expect(parseSchedule("EVERY 2h")).toEqual({ kind: "every", everyMs: 7_200_000 });
    expect(parseSchedule("every 1d")).toEqual({ kind: "every", everyMs: 86_400_000 });
  });

  it("refuses a unit it does not know or a zero period", () => {
    expect(() => parseSchedule("every 5 minutes")).toThrow(/every <n><unit>/);
    expect(() => parseSchedule("every 0s")).toThrow(/at least 1s/);
  });
});

describe("one-shot ISO times", () => {
  it("fire once, at the time given", () => {
    const s = parseSchedule("2026-12-24T18:00:00+01:00");
    expect(s).toEqual({ kind: "at", at: at("2026-12-24T17:00:00Z") });
    expect(nextFiring(s, at("2026-12-01T00:00:00Z"))).toBe(at("2026-12-24T17:00:00Z"));
    expect(nextFiring(s, at("2026-12-24T17:00:00Z"))).toBeNull();
  });

  it("read a time without an offset in the job's timezone", () => {
    expect(parseSchedule("2026-07-01T09:00", "Europe/Berlin")).toEqual({ kind: "at", at: at("2026-07-01T07:00:00Z") });
    expect(parseSchedule("2026-07-01T09:00:00.250Z")).toEqual({ kind: "at", at: at("2026-07-01T09:00:00.250Z") });
  });

  it("refuse dates that do not exist", () => {
    expect(() => parseSchedule("2026-02-30T10:00:00Z")).toThrow(/not a valid date-time/);
    expect(() => parseSchedule("2026-02-10")).toThrow(/not an ISO 8601 date-time/);
  });
});

describe("lastFiring", () => {
  it("finds the latest firing in a window, or none", () => {
    expect(iso(lastFiring(parseSchedule("every 1s"), at("2026-03-01T10:00:00Z"), at("2026-03-01T10:00:07.500Z")))).toBe("2026-03-01T10:00:07.000Z");
    expect(lastFiring(parseSchedule("every 1m"), at("2026-03-01T10:00:00Z"), at("2026-03-01T10:00:30Z"))).toBeNull();
    expect(iso(lastFiring(parseSchedule("0 * * * *"), at("2026-03-01T10:00:00Z"), at("2026-03-01T13:20:00Z")))).toBe("2026-03-01T13:00:00.000Z");
    // A week of every-second firings behind: the latest, found without walking through them all.
    const everySecond = parseSchedule("* * * * * *", "Europe/Berlin");
    expect(iso(lastFiring(everySecond, at("2026-03-01T00:00:00Z"), at("2026-03-08T12:00:00.500Z")))).toBe("2026-03-08T12:00:00.000Z");
    expect(iso(lastFiring(parseSchedule("0 0 1 1 *"), at("2020-06-01T00:00:00Z"), at("2026-03-08T12:00:00Z")))).toBe("2026-01-01T00:00:00.000Z");
    expect(lastFiring(parseSchedule("0 0 1 1 *"), at("2026-01-01T00:00:00Z"), at("2026-03-08T12:00:00Z"))).toBeNull();
    const once = parseSchedule("2026-03-01T09:00:00Z");
    expect(iso(lastFiring(once, Number.NEGATIVE_INFINITY, at("2026-03-02T00:00:00Z")))).toBe("2026-03-01T09:00:00.000Z");
    expect(lastFiring(once, at("2026-03-01T09:00:00Z"), at("2026-03-02T00:00:00Z"))).toBeNull();
  });
});
