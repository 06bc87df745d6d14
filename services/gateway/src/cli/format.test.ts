import { describe, expect, it } from "vitest";
import { colourWanted, paint, relativeTime, table, truncate, visibleWidth } from "./format.js";

describe("table", () => {
  it("aligns every column to its widest cell, two spaces apart, with no trailing spaces", () => {
    const text = table(["ID", "MODEL", "NOTE"], [["main", "builtin/echo", "x"], ["ops-longer", "m", ""]]);
    expect(text.split("\n")).toEqual(["ID          MODEL         NOTE", "main        builtin/echo  x", "ops-longer  m"]);
  });

  it("aligns by what the terminal shows: colour codes take no room", () => {
    const text = table(["A", "B"], [[paint(true, "green", "yes"), "1"], ["no", "2"]]);
    // eslint-disable-next-line no-control-regex -- stripping the colour codes the table wrote
    expect(text.replace(/\u001b\[[0-9;]*m/g, "").split("\n")).toEqual(["A    B", "yes  1", "no   2"]);
    expect(visibleWidth(paint(true, "red", "abc"))).toBe(3);
  });

  it("says so when there are no rows", () => {
    expect(table(["A"], [], "nothing here")).toBe("nothing here");
  });
});

describe("relativeTime", () => {
  const now = 1_700_000_000_000;
  it.each([
    [now - 500, "just now"],
    [now - 5_000, "5s ago"],
    [now - 3 * 60_000 - 10_000, "3m ago"],
    [now - 2 * 3_600_000, "2h ago"],
    [now - 4 * 86_400_000, "4d ago"],
    [now + 3 * 60_000, "in 3m"],
  ])("%d is %s", (at, expected) => {
    expect(relativeTime(at, now)).toBe(expected);
  });

  it("shows a dash for never", () => {
    expect(relativeTime(null, now)).toBe("-");
    expect(relativeTime(0, now)).toBe("-");
    expect(relativeTime(undefined, now)).toBe("-");
  });
});

describe("colour", () => {
  it("is on only for a terminal without NO_COLOR", () => {
    expect(colourWanted({ isTTY: true }, {})).toBe(true);
    expect(colourWanted({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(colourWanted({ isTTY: true }, { NO_COLOR: "" })).toBe(true);
    expect(colourWanted({ isTTY: false }, {})).toBe(false);
    expect(colourWanted({}, {})).toBe(false);
  });

  it("leaves text alone when off", () => {
    expect(paint(false, "red", "plain")).toBe("plain");
    expect(paint(true, "red", "x")).toBe("\u001b[31mx\u001b[39m");
  });
});

describe("truncate", () => {
  it("keeps one line and cuts with an ellipsis", () => {
    expect(truncate("a\n  b", 10)).toBe("a b");
    expect(truncate("abcdefghij", 5)).toBe("abcd…");
  });
});
