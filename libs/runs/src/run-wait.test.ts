import type { AgentEventPayload, RunRecord } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { RunWait, type WaitInput } from "./run-wait.js";

const T = { pollMs: 1_000, settleMs: 2_000, skewMs: 1_000 };
const FOLLOWED_AT = 10_000;

const record = (over: Partial<RunRecord> = {}): RunRecord => ({
  runId: "r",
  sessionKey: "s:1",
  agentId: "main",
  state: "done",
  edgeId: "e",
  createdAt: FOLLOWED_AT,
  updatedAt: FOLLOWED_AT,
  ...over,
});
const chunk = (text: string): AgentEventPayload => ({ runId: "r", seq: 1, stream: "assistant", data: { type: "text", text } });
const end: AgentEventPayload = { runId: "r", seq: 2, stream: "lifecycle", data: { phase: "end" } };
const event = (payload: AgentEventPayload, at: number, final?: RunRecord): WaitInput => ({ type: "event", payload, final, at });

/** A wait that is admitted and started at FOLLOWED_AT, with a deadline 60 s later. */
function following(checkFirst = false): RunWait {
  const wait = new RunWait(T, FOLLOWED_AT, checkFirst);
  wait.step({ type: "admitted", at: FOLLOWED_AT });
  wait.step({ type: "start", at: FOLLOWED_AT, deadline: FOLLOWED_AT + 60_000 });
  return wait;
}

/** A started wait whose registry check is under way. */
function checking(): RunWait {
  const wait = following();
  expect(wait.step({ type: "tick", at: FOLLOWED_AT + 1_000 })).toEqual([{ type: "check" }]);
  return wait;
}

describe("RunWait: admitting", () => {
  it("keeps events that beat the registration, then replays and delivers them in order on admission", () => {
    const wait = new RunWait(T, FOLLOWED_AT, false);
    expect(wait.step(event(chunk("a"), 1))).toEqual([]);
    expect(wait.step(event(chunk("b"), 2))).toEqual([]);
    expect(wait.current).toBe("admitting");
    expect(wait.step({ type: "admitted", at: 3 })).toEqual([
      { type: "replay", payloads: [chunk("a"), chunk("b")] },
      { type: "deliver", payload: chunk("a"), final: undefined },
      { type: "deliver", payload: chunk("b"), final: undefined },
    ]);
    expect(wait.current).toBe("following");
  });

  it("finishes on admission when the early events already hold the end", () => {
    const wait = new RunWait(T, FOLLOWED_AT, false);
    const final = record();
    wait.step(event(chunk("a"), 1));
    wait.step(event(end, 2, final));
    expect(wait.step({ type: "admitted", at: 3 })).toEqual([
      { type: "replay", payloads: [chunk("a"), end] },
      { type: "deliver", payload: chunk("a"), final: undefined },
      { type: "deliver", payload: end, final },
      { type: "finish", result: final },
    ]);
    expect(wait.current).toBe("done");
  });

  it("hands nothing over once abandoned (the runId was not ours)", () => {
    const wait = new RunWait(T, FOLLOWED_AT, false);
    wait.step(event(chunk("secret"), 1));
    expect(wait.step({ type: "abandon" })).toEqual([]);
    expect(wait.step({ type: "admitted", at: 2 })).toEqual([]);
    expect(wait.step(event(chunk("more"), 3))).toEqual([]);
    expect(wait.current).toBe("done");
  });
});

describe("RunWait: following", () => {
  it("sleeps until the run would have been quiet for a poll interval", () => {
    const wait = new RunWait(T, FOLLOWED_AT, false);
    wait.step({ type: "admitted", at: FOLLOWED_AT });
    expect(wait.step({ type: "start", at: FOLLOWED_AT + 5, deadline: FOLLOWED_AT + 60_000 })).toEqual([
      { type: "wake-at", at: FOLLOWED_AT + 1_000 },
    ]);
  });

  it("delivers events and, while they flow, reads no registry", () => {
    const wait = following();
    expect(wait.step(event(chunk("a"), FOLLOWED_AT + 900))).toEqual([{ type: "deliver", payload: chunk("a"), final: undefined }]);
    expect(wait.step({ type: "tick", at: FOLLOWED_AT + 1_000 })).toEqual([{ type: "wake-at", at: FOLLOWED_AT + 1_900 }]);
    expect(wait.step({ type: "tick", at: FOLLOWED_AT + 1_900 })).toEqual([{ type: "check" }]);
    expect(wait.current).toBe("checking");
  });

  it("finishes with the final record the terminal event carries, with no registry read", () => {
    const wait = following();
    const final = record();
    expect(wait.step(event(end, FOLLOWED_AT + 10, final))).toEqual([
      { type: "deliver", payload: end, final },
      { type: "finish", result: final },
    ]);
    expect(wait.step(event(chunk("late"), FOLLOWED_AT + 11))).toEqual([]);
  });

  it("checks the registry for the outcome of a terminal event that carries none", () => {
    const wait = following();
    expect(wait.step(event(end, FOLLOWED_AT + 10))).toEqual([{ type: "deliver", payload: end, final: undefined }, { type: "check" }]);
    // The end was seen already: a final record needs no settling.
    const final = record({ updatedAt: FOLLOWED_AT + 10 });
    expect(wait.step({ type: "checked", verdict: { kind: "final", record: final }, at: FOLLOWED_AT + 12 })).toEqual([
      { type: "finish", result: final },
    ]);
  });

  it("checks at the start for a terminal event without its record that came before the start", () => {
    const wait = new RunWait(T, FOLLOWED_AT, false);
    wait.step({ type: "admitted", at: FOLLOWED_AT });
    expect(wait.step(event(end, FOLLOWED_AT + 1))).toEqual([{ type: "deliver", payload: end, final: undefined }]);
    expect(wait.step({ type: "start", at: FOLLOWED_AT + 2, deadline: FOLLOWED_AT + 60_000 })).toEqual([{ type: "check" }]);
  });

  it("checks at once when asked to (agent.wait: the run may be over already)", () => {
    const wait = new RunWait(T, FOLLOWED_AT, true);
    wait.step({ type: "admitted", at: FOLLOWED_AT });
    expect(wait.step({ type: "start", at: FOLLOWED_AT, deadline: FOLLOWED_AT + 5_000 })).toEqual([{ type: "check" }]);
  });

  it("finishes with the record of a failed dispatch", () => {
    const wait = new RunWait(T, FOLLOWED_AT, false);
    wait.step({ type: "admitted", at: FOLLOWED_AT });
    const final = record({ state: "error", error: { code: "UNAVAILABLE", message: "no runner" } });
    expect(wait.step({ type: "dispatch-failed", final })).toEqual([{ type: "finish", result: final }]);
    expect(wait.step({ type: "start", at: FOLLOWED_AT, deadline: FOLLOWED_AT + 5_000 })).toEqual([]);
  });

  it("checks one last time at the deadline", () => {
    const wait = following();
    wait.step(event(chunk("a"), FOLLOWED_AT + 59_500));
    expect(wait.step({ type: "tick", at: FOLLOWED_AT + 60_000 })).toEqual([{ type: "check" }]);
  });
});

describe("RunWait: checking", () => {
  it("keeps following a live run and checks again a poll interval later", () => {
    const wait = checking();
    expect(wait.step({ type: "checked", verdict: { kind: "live" }, at: FOLLOWED_AT + 1_003 })).toEqual([
      { type: "wake-at", at: FOLLOWED_AT + 2_003 },
    ]);
    expect(wait.current).toBe("following");
  });

  it("answers null for a run still live at the deadline", () => {
    const wait = following();
    wait.step({ type: "tick", at: FOLLOWED_AT + 60_000 });
    expect(wait.step({ type: "checked", verdict: { kind: "live" }, at: FOLLOWED_AT + 60_002 })).toEqual([
      { type: "finish", result: null },
    ]);
  });

  it("finishes at once with a record that was final well before the wait began", () => {
    const wait = checking();
    const old = record({ updatedAt: FOLLOWED_AT - 1_001 });
    expect(wait.step({ type: "checked", verdict: { kind: "final", record: old }, at: FOLLOWED_AT + 1_002 })).toEqual([
      { type: "finish", result: old },
    ]);
  });

  it("ends the run of a dead runner, then settles on the record it wrote", () => {
    const wait = checking();
    const running = record({ state: "running", owner: "runner-1" });
    expect(wait.step({ type: "checked", verdict: { kind: "dead", record: running }, at: FOLLOWED_AT + 1_002 })).toEqual([
      { type: "end-run", record: running },
    ]);
    expect(wait.current).toBe("ending");
    const ended = record({ state: "error", updatedAt: FOLLOWED_AT + 1_003, error: { code: "UNAVAILABLE", message: "gone" } });
    expect(wait.step({ type: "ended", record: ended, at: FOLLOWED_AT + 1_003 })).toEqual([
      { type: "wake-at", at: FOLLOWED_AT + 3_003 },
    ]);
    const lifecycleError: AgentEventPayload = { runId: "r", seq: 3, stream: "lifecycle", data: { phase: "error" } };
    expect(wait.step(event(lifecycleError, FOLLOWED_AT + 1_004, ended))).toEqual([
      { type: "deliver", payload: lifecycleError, final: ended },
      { type: "finish", result: ended },
    ]);
  });

  it("finishes with the terminal event's record when it arrives while the registry is read", () => {
    const wait = checking();
    const final = record();
    expect(wait.step(event(end, FOLLOWED_AT + 1_001, final))).toEqual([
      { type: "deliver", payload: end, final },
      { type: "finish", result: final },
    ]);
    expect(wait.step({ type: "checked", verdict: { kind: "live" }, at: FOLLOWED_AT + 1_002 })).toEqual([]);
  });

  it("reports a run the registry no longer knows as expired", () => {
    const wait = checking();
    expect(wait.step({ type: "checked", verdict: { kind: "gone" }, at: FOLLOWED_AT + 1_002 })).toEqual([{ type: "expired" }]);
    expect(wait.current).toBe("done");
  });
});

describe("RunWait: settling", () => {
  it("waits for the terminal event of a run that has just ended, and answers with the record", () => {
    const wait = checking();
    const final = record({ updatedAt: FOLLOWED_AT + 500 });
    expect(wait.step({ type: "checked", verdict: { kind: "final", record: final }, at: FOLLOWED_AT + 1_002 })).toEqual([
      { type: "wake-at", at: FOLLOWED_AT + 3_002 },
    ]);
    expect(wait.current).toBe("settling");
    expect(wait.step(event(chunk("last"), FOLLOWED_AT + 1_010))).toEqual([{ type: "deliver", payload: chunk("last"), final: undefined }]);
    expect(wait.step(event(end, FOLLOWED_AT + 1_020))).toEqual([
      { type: "deliver", payload: end, final: undefined },
      { type: "finish", result: final },
    ]);
  });

  it("gives up waiting for the terminal event after the settle time", () => {
    const wait = checking();
    const final = record({ updatedAt: FOLLOWED_AT + 500 });
    wait.step({ type: "checked", verdict: { kind: "final", record: final }, at: FOLLOWED_AT + 1_002 });
    expect(wait.step({ type: "tick", at: FOLLOWED_AT + 3_002 })).toEqual([{ type: "finish", result: final }]);
  });

  it("sets its timer again when it fires a millisecond early, so the wait always ends", () => {
    // Node fires timers by its own clock: Date.now() may read a millisecond short of the due time.
    const wait = checking();
    const final = record({ updatedAt: FOLLOWED_AT + 500 });
    wait.step({ type: "checked", verdict: { kind: "final", record: final }, at: FOLLOWED_AT + 1_002 });
    expect(wait.step({ type: "tick", at: FOLLOWED_AT + 3_001 })).toEqual([{ type: "wake-at", at: FOLLOWED_AT + 3_002 }]);
    expect(wait.current).toBe("settling");
    expect(wait.step({ type: "tick", at: FOLLOWED_AT + 3_002 })).toEqual([{ type: "finish", result: final }]);
  });
});

describe("RunWait: early timers while following", () => {
  it("sets its timer again for a quiet check that is not due yet", () => {
    const wait = following();
    expect(wait.step({ type: "tick", at: FOLLOWED_AT + 999 })).toEqual([{ type: "wake-at", at: FOLLOWED_AT + 1_000 }]);
    expect(wait.step({ type: "tick", at: FOLLOWED_AT + 1_000 })).toEqual([{ type: "check" }]);
  });
});
