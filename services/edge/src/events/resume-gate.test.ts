import { TERMINAL_SEQ } from "@gw/runs";
import { describe, expect, it } from "vitest";
import { type GatedEvent, ResumeGate } from "./resume-gate.js";

const ev = (seq: number, terminal = false): GatedEvent => ({ seq, frame: Buffer.from(String(seq)), terminal });
const evs = (...seqs: number[]) => seqs.map((seq) => ev(seq));

function gate(afterSeq: number | undefined) {
  const sent: number[] = [];
  let gaps = 0;
  const g = new ResumeGate(afterSeq, (e) => sent.push(e.seq), () => (gaps += 1));
  return { g, sent, gaps: () => gaps };
}

describe("ResumeGate", () => {
  it("sends the stored events after afterSeq, then what came live meanwhile, each once and in order", () => {
    const { g, sent } = gate(2);
    // Live from seq 5 on, while the store is read (it has 1..6: the live ones overlap it).
    g.offer(ev(5));
    g.offer(ev(6));
    expect(sent).toEqual([]);
    g.fill(evs(1, 2, 3, 4, 5, 6));
    g.offer(ev(7));
    g.openGate();
    g.offer(ev(6));
    g.offer(ev(8));
    expect(sent).toEqual([3, 4, 5, 6, 7, 8]);
    expect(g.sent).toBe(8);
  });

  it("reports a gap between the store and the live events, and closes it when the store catches up", () => {
    const { g, sent } = gate(0);
    g.offer(ev(4));
    g.fill(evs(1, 2));
    expect(g.hasGap).toBe(true);
    expect(sent).toEqual([1, 2]);
    // The store had not yet taken seq 3 in: the next read has it.
    g.fill(evs(1, 2, 3));
    expect(g.hasGap).toBe(false);
    expect(sent).toEqual([1, 2, 3, 4]);
  });

  it("once open, holds a live event that skips one and asks for the store once", () => {
    const { g, sent, gaps } = gate(0);
    g.openGate();
    g.offer(ev(1));
    g.offer(ev(3));
    g.offer(ev(4));
    expect(sent).toEqual([1]);
    expect(gaps()).toBe(1);
    g.fill(evs(2));
    expect(sent).toEqual([1, 2, 3, 4]);
    g.offer(ev(6));
    expect(gaps()).toBe(2);
    g.skipGap();
    expect(sent).toEqual([1, 2, 3, 4, 6]);
  });

  it("starts a live-only gate at the first live event", () => {
    const { g, sent } = gate(undefined);
    g.openGate();
    g.offer(ev(7));
    g.offer(ev(8));
    g.offer(ev(8));
    expect(sent).toEqual([7, 8]);
  });

  it("lets the terminal event from outside the runner follow anything, but after what waits before it", () => {
    const { g, sent } = gate(0);
    g.offer(ev(TERMINAL_SEQ, true));
    g.offer(ev(2));
    g.fill(evs(1));
    expect(sent).toEqual([1, 2, TERMINAL_SEQ]);
    expect(g.ended).toBe(true);
    g.offer(ev(3));
    expect(sent).toEqual([1, 2, TERMINAL_SEQ]);
  });

  it("sends nothing stored at or before afterSeq", () => {
    const { g, sent } = gate(5);
    g.fill(evs(1, 2, 3, 4, 5));
    g.openGate();
    expect(sent).toEqual([]);
    expect(g.hasGap).toBe(false);
  });
});
