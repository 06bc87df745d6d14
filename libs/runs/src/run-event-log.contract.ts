import type { Bus, Subjects } from "@gw/bus";
import { afterEach, describe, expect, it } from "vitest";
import { agentEventMessage, type RunAddress, terminalMessages } from "./agent-events.js";
import type { RunEventLog, RunEventRetention } from "./run-event-log.js";

/** A log with the bus its runs publish on (a separate connection in distributed mode, as a runner's). */
export interface RunEventLogSetup {
  log: RunEventLog;
  bus: Bus;
  subjects: Subjects;
  /** Lets `ms` pass for the log's retention (a fake clock, or real time). */
  elapse(ms: number): Promise<void>;
  dispose(): Promise<void>;
}

const run = (runId: string, sessionKey = "k:1", edgeId = "e1"): RunAddress => ({ runId, sessionKey, edgeId });

function publish(setup: RunEventLogSetup, to: RunAddress, first: number, count: number, text = "x"): void {
  for (let seq = first; seq < first + count; seq++) {
    const m = agentEventMessage(setup.subjects, to, { runId: to.runId, stream: seq === 1 ? "lifecycle" : "assistant", data: { text } }, seq);
    setup.bus.publish(m.subject, m.data);
  }
}

/** The RunEventLog port's contract, for every implementation. */
export function describeRunEventLogContract(name: string, make: (retention: RunEventRetention) => Promise<RunEventLogSetup>): void {
  describe(`RunEventLog contract: ${name}`, () => {
    let setup: RunEventLogSetup | undefined;
    const start = async (retention: RunEventRetention = { maxAgeMs: 60_000, maxBytes: 10_000_000 }) => {
      setup = await make(retention);
      return setup;
    };
    afterEach(async () => {
      await setup?.dispose();
      setup = undefined;
    });

    it("keeps one run's events in seq order, all of them up to the read, and not its final record", async () => {
      const s = await start();
      publish(s, run("r1"), 1, 20);
      publish(s, run("r2", "k:2", "e2"), 1, 3);
      const final = { runId: "r1", sessionKey: "k:1", agentId: "", state: "done" as const, edgeId: "e1", createdAt: 0, updatedAt: 0 };
      for (const m of terminalMessages(s.subjects, run("r1"), { runId: "r1", stream: "lifecycle", data: { phase: "end" } }, 21, final)) {
        s.bus.publish(m.subject, m.data);
      }
      // No waiting: a read sees whatever was published before it began.
      const events = await s.log.read("r1");
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
      expect(events.every((e) => e.runId === "r1" && e.finalRecordJson.length === 0)).toBe(true);
      expect((await s.log.read("r2")).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(await s.log.read("nothing-here")).toEqual([]);
    });

    it("forgets events older than the retention window", async () => {
      const s = await start({ maxAgeMs: 1_000, maxBytes: 10_000_000 });
      publish(s, run("old"), 1, 2);
      await s.log.read("old");
      await s.elapse(2_500);
      publish(s, run("new"), 1, 1);
      expect(await s.log.read("old")).toEqual([]);
      expect((await s.log.read("new")).map((e) => e.seq)).toEqual([1]);
    });

    it("drops the oldest events first when over its bytes", async () => {
      const s = await start({ maxAgeMs: 60_000, maxBytes: 4_096 });
      publish(s, run("big"), 1, 80, "y".repeat(100));
      const kept = (await s.log.read("big")).map((e) => e.seq);
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length).toBeLessThan(80);
      expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => 81 - kept.length + i));
    });
  });
}
