import { describe, expect, it } from "vitest";
import { subjectMatches } from "./subject-match.js";
import { createSubjects, decodeSubjectToken } from "./subjects.js";

const subjects = createSubjects("gw");

describe("run event subjects", () => {
  const run = { startedBy: "edge-1", sessionKey: "slack:#a.b *", runId: "run:a.b c" };
  const out = subjects.runEvents({ ...run, part: "out" });
  const life = subjects.runEvents({ ...run, part: "life" });

  it("name the starting edge, the session, the run and the part, each as one token", () => {
    const [, kind, edge, session, id, part, ...rest] = out.split(".");
    expect([kind, part, rest]).toEqual(["run", "out", []]);
    expect(decodeSubjectToken(edge!)).toBe("edge-1");
    expect(decodeSubjectToken(session!)).toBe("slack:#a.b *");
    expect(decodeSubjectToken(id!)).toBe("run:a.b c");
  });

  it("are matched by the starting edge's runs, by the run, by its session, by part and by every run", () => {
    for (const subject of [out, life]) {
      expect(subjectMatches(subjects.runEvents({ startedBy: "edge-1" }), subject)).toBe(true);
      expect(subjectMatches(subjects.runEvents({ runId: "run:a.b c" }), subject)).toBe(true);
      expect(subjectMatches(subjects.runEvents({ sessionKey: "slack:#a.b *" }), subject)).toBe(true);
      expect(subjectMatches(subjects.runEvents({}), subject)).toBe(true);
      expect(subjectMatches(subjects.allRunEvents(), subject)).toBe(true);
      expect(subjectMatches(subjects.runEvents({ startedBy: "edge-2" }), subject)).toBe(false);
      expect(subjectMatches(subjects.runEvents({ runId: "run:other" }), subject)).toBe(false);
      expect(subjectMatches(subjects.runEvents({ sessionKey: "slack:#a" }), subject)).toBe(false);
    }
    expect(subjectMatches(subjects.runEvents({ part: "life" }), life)).toBe(true);
    expect(subjectMatches(subjects.runEvents({ part: "life" }), out)).toBe(false);
    expect(subjectMatches(subjects.runEvents({ startedBy: "edge-1", part: "final" }), out)).toBe(false);
  });

  it("give a run without a starting edge a token no edge id can have, and a wildcard id none", () => {
    const orphan = subjects.runEvents({ startedBy: "", sessionKey: "k:1", runId: "r1", part: "life" });
    expect(orphan.split(".")[2]).toBe("_");
    expect(subjectMatches(subjects.runEvents({ runId: "r1" }), orphan)).toBe(true);
    expect(subjectMatches(subjects.runEvents({ startedBy: "_" }), orphan)).toBe(false);
    expect(subjectMatches(subjects.runEvents({ runId: "*" }), orphan)).toBe(false);
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
