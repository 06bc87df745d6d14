import { describe, expect, it } from "vitest";
import { subjectMatches } from "./subject-match.js";
import { createSubjects, decodeSubjectToken, hashPartition, RUN_EVENT_PARTS } from "./subjects.js";

const split = createSubjects("gw", { runEventPartitions: 8 });
const runIds = Array.from({ length: 400 }, (_, i) => `run-${i}`);

describe("run event partitions", () => {
  it("map a run id to one partition by its hash, the same for every caller and every run id", () => {
    // FNV-1a 32-bit: fixed values, so processes of different releases agree.
    expect([hashPartition("", 1 << 30), hashPartition("a", 1 << 30), hashPartition("foobar", 1 << 30)]).toEqual([
      0x811c9dc5 % (1 << 30),
      0xe40c292c % (1 << 30),
      0xbf9cf968 % (1 << 30),
    ]);
    const again = createSubjects("gw", { runEventPartitions: 8 });
    for (const runId of runIds) {
      expect(split.runEventPartition(runId)).toBe(again.runEventPartition(runId));
      expect(split.runEventPartition(runId)).toBe(hashPartition(runId, 8));
    }
    expect(createSubjects("gw").runEventPartition("run-1")).toBe(0);
  });

  it("spread runs over every partition", () => {
    const counts = new Array<number>(8).fill(0);
    for (const runId of runIds) counts[split.runEventPartition(runId)]! += 1;
    expect(counts.every((n) => n > 0)).toBe(true);
  });

  it("put a run's events on its partition's subjects, which every subscriber scope still matches", () => {
    for (const runId of runIds.slice(0, 40)) {
      const p = split.runEventPartition(runId);
      for (const part of RUN_EVENT_PARTS) {
        const subject = split.runEvents({ startedBy: "edge-1", sessionKey: "k:1", runId, part });
        const [, root, partition, , , id] = subject.split(".");
        expect([root, partition, decodeSubjectToken(id!)]).toEqual(["runp", String(p), runId]);
        for (const scope of [{ startedBy: "edge-1" }, { runId }, { sessionKey: "k:1", part }, { part }, {}]) {
          expect(subjectMatches(split.runEvents(scope), subject)).toBe(true);
        }
        expect(subjectMatches(split.allRunEvents(), subject)).toBe(true);
        for (let q = 0; q < 8; q++) expect(subjectMatches(split.runEventPartitionSubjects(q), subject)).toBe(q === p);
      }
    }
  });

  it("keep the one-partition layout as it was, apart from every split partition's subjects", () => {
    const one = createSubjects("gw");
    expect(one.runEvents({ startedBy: "e", sessionKey: "k", runId: "r", part: "out" }).split(".").slice(0, 2)).toEqual(["gw", "run"]);
    expect(one.runEventPartitionSubjects(0)).toBe(one.runEvents({}));
    const legacy = one.runEvents({ startedBy: "e", sessionKey: "k", runId: "r", part: "out" });
    const partitioned = split.runEvents({ startedBy: "e", sessionKey: "k", runId: "r", part: "out" });
    expect(subjectMatches(one.allRunEvents(), partitioned)).toBe(false);
    expect(subjectMatches(split.allRunEvents(), legacy)).toBe(false);
  });

  it("refuse a partition count or a partition that does not exist", () => {
    expect(() => createSubjects("gw", { runEventPartitions: 0 })).toThrow(/partition count/);
    expect(() => createSubjects("gw", { runEventPartitions: 1.5 })).toThrow(/partition count/);
    expect(() => split.runEventPartitionSubjects(8)).toThrow(/no run event partition 8 of 8/);
  });
});
