import { createSubjects } from "@gw/bus";
import { describe, expect, it } from "vitest";
import { plannedSubjects, type RunInterest } from "./run-interest.js";

const subjects = createSubjects("gw");
const none: RunInterest = { everyLifecycle: false, everyOutput: false, sessions: [], runs: [] };
const plan = (over: Partial<RunInterest>) => [...plannedSubjects(subjects, "e1", { ...none, ...over })].sort();
const s = (scope: Parameters<typeof subjects.runEvents>[0]) => subjects.runEvents(scope);

describe("plannedSubjects", () => {
  it("takes the edge's own runs whole with one subscription when nothing else is wanted", () => {
    expect(plan({})).toEqual([s({ startedBy: "e1" })]);
  });

  it("with a control connection: every run's lifecycle once, and only the rest of its own runs", () => {
    expect(plan({ everyLifecycle: true })).toEqual(
      [s({ part: "life" }), s({ startedBy: "e1", part: "out" }), s({ startedBy: "e1", part: "final" })].sort(),
    );
  });

  it("with a firehose: every lifecycle and output once, and only its own runs' records besides", () => {
    expect(plan({ everyLifecycle: true, everyOutput: true, sessions: ["k:1"], runs: [{ runId: "r9" }] })).toEqual(
      [s({ part: "life" }), s({ part: "out" }), s({ startedBy: "e1", part: "final" }), s({ runId: "r9", part: "final" })].sort(),
    );
  });

  it("follows a run from elsewhere whole, or only its record when its session is subscribed", () => {
    expect(plan({ runs: [{ runId: "r1" }, { runId: "r2", sessionKey: "k:1" }], sessions: ["k:1"] })).toEqual(
      [
        s({ startedBy: "e1" }),
        s({ sessionKey: "k:1", part: "life" }),
        s({ sessionKey: "k:1", part: "out" }),
        s({ runId: "r1" }),
        s({ runId: "r2", part: "final" }),
      ].sort(),
    );
  });

  it("leaves a session's and a run's lifecycle to the every-lifecycle subscription", () => {
    expect(plan({ everyLifecycle: true, sessions: ["k:1"], runs: [{ runId: "r1" }] })).toEqual(
      [
        s({ part: "life" }),
        s({ startedBy: "e1", part: "out" }),
        s({ startedBy: "e1", part: "final" }),
        s({ sessionKey: "k:1", part: "out" }),
        s({ runId: "r1", part: "out" }),
        s({ runId: "r1", part: "final" }),
      ].sort(),
    );
  });
});
