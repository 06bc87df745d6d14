import { describe, expect, it } from "vitest";
import { RunFollow } from "./run-follow.js";

const text = (seq: number, t: string) => ({ runId: "r1", seq, stream: "assistant", data: { type: "text", text: t } });
const lifecycle = (seq: number, data: Record<string, unknown>) => ({ runId: "r1", seq, stream: "lifecycle", data });

describe("RunFollow", () => {
  it("applies each event once, in seq order, and remembers where to resume", () => {
    const run = new RunFollow("r1");
    expect(run.apply(lifecycle(1, { phase: "start" }))).toBeUndefined();
    expect(run.apply(text(2, "Hel"))).toEqual({ kind: "text", text: "Hel" });
    // A resubscription after a drop replays from afterSeq; a repeat is left out.
    expect(run.apply(text(2, "Hel"))).toBeUndefined();
    expect(run.apply(text(3, "lo"))).toEqual({ kind: "text", text: "lo" });
    expect(run.lastSeq).toBe(3);
    expect(run.ended).toBe(false);
  });

  it("ignores other runs' events", () => {
    const run = new RunFollow("r1");
    expect(run.apply({ ...text(1, "x"), runId: "r2" })).toBeUndefined();
    expect(run.lastSeq).toBe(0);
  });

  it("passes tool events on for their cards", () => {
    const run = new RunFollow("r1");
    const start = { runId: "r1", seq: 1, stream: "tool", data: { phase: "start", name: "time.now", toolCallId: "c1", input: {} } };
    expect(run.apply(start)).toEqual({ kind: "tool", data: start.data });
  });

  it("ends with the run's end, error or abort, and takes nothing after it", () => {
    const ok = new RunFollow("r1");
    expect(ok.apply(lifecycle(1, { phase: "end" }))).toEqual({ kind: "end", state: "ok" });
    expect(ok.apply(text(2, "late"))).toBeUndefined();
    expect(ok.ended).toBe(true);

    const failed = new RunFollow("r1");
    expect(failed.apply(lifecycle(4, { phase: "error", code: "MODEL_ERROR", error: "upstream 500" }))).toEqual({
      kind: "end",
      state: "error",
      error: "MODEL_ERROR: upstream 500",
    });
    const stopped = new RunFollow("r1");
    expect(stopped.apply(lifecycle(2, { phase: "error", code: "ABORTED", error: "aborted", aborted: true }))?.kind).toBe("end");
    expect(stopped.state).toBe("aborted");
  });

  it("ends once when the gateway says the run was already over", () => {
    const run = new RunFollow("r1");
    expect(run.finishedElsewhere("ok")).toEqual({ kind: "end", state: "ok" });
    expect(run.finishedElsewhere("ok")).toBeUndefined();
    expect(new RunFollow("r2").finishedElsewhere("error")?.kind).toBe("end");
  });
});
