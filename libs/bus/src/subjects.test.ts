import { describe, expect, it } from "vitest";
import { subjectMatches } from "./subject-match.js";
import { createSubjects, decodeSubjectToken } from "./subjects.js";

const subjects = createSubjects("gw");

describe("run event subjects", () => {
  const subject = subjects.runEvents("edge-1", "run:a.b c");

  it("name the starting edge and the run, each as one token", () => {
    const [, , edge, run, last, ...rest] = subject.split(".");
    expect(rest).toEqual([]);
    expect(last).toBe("events");
    expect(decodeSubjectToken(edge!)).toBe("edge-1");
    expect(decodeSubjectToken(run!)).toBe("run:a.b c");
  });

  it("are matched by the starting edge's own runs, by the run wherever it started, and by every run", () => {
    expect(subjectMatches(subjects.runEvents("edge-1", "*"), subject)).toBe(true);
    expect(subjectMatches(subjects.runEvents("*", "run:a.b c"), subject)).toBe(true);
    expect(subjectMatches(subjects.runEvents("*", "*"), subject)).toBe(true);
    expect(subjectMatches(subjects.runEvents("edge-2", "*"), subject)).toBe(false);
    expect(subjectMatches(subjects.runEvents("*", "run:other"), subject)).toBe(false);
  });

  it("give a run without a starting edge a token no edge id can have", () => {
    const orphan = subjects.runEvents("", "r1");
    expect(orphan.split(".")[2]).toBe("_");
    expect(subjectMatches(subjects.runEvents("*", "r1"), orphan)).toBe(true);
    expect(subjectMatches(subjects.runEvents("_", "*"), orphan)).toBe(false);
  });
});

describe("session lock subjects", () => {
  it("name one session as one token, whatever its key holds", () => {
    const subject = subjects.sessionLockReleased("slack:#general.ops *");
    const [, kind, key, last, ...rest] = subject.split(".");
    expect([kind, last, rest]).toEqual(["runlock", "released", []]);
    expect(decodeSubjectToken(key!)).toBe("slack:#general.ops *");
    expect(subjectMatches(subjects.sessionLockReleased("slack:#other"), subject)).toBe(false);
  });
});

describe("edge request subjects", () => {
  it("reach one edge by id, apart from every other edge and from its event inbox", () => {
    const subject = subjects.edgeRpc("e2e0", "pair.resolve");
    expect(subject).toBe("gw.edge.e2e0.rpc.pair.resolve");
    expect(subjectMatches(subjects.edgeRpc("e2e1", "pair.resolve"), subject)).toBe(false);
    expect(subjectMatches(subjects.edgeEvents("e2e0"), subject)).toBe(false);
    expect(() => subjects.edgeRpc("e 1", "pair.resolve")).toThrow(/edge id/);
  });
});
