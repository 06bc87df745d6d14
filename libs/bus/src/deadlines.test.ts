import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Deadlines } from "./deadlines.js";

describe("Deadlines", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires each deadline at its time, in order, with one timer per length", () => {
    const deadlines = new Deadlines();
    const fired: string[] = [];
    deadlines.start(100, () => fired.push("a"));
    vi.advanceTimersByTime(30);
    deadlines.start(100, () => fired.push("b"));
    deadlines.start(50, () => fired.push("short"));
    expect(vi.getTimerCount()).toBe(2);
    vi.advanceTimersByTime(49);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["short"]);
    vi.advanceTimersByTime(20);
    expect(fired).toEqual(["short", "a"]);
    vi.advanceTimersByTime(29);
    expect(fired).toEqual(["short", "a"]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["short", "a", "b"]);
    expect(deadlines.waiting).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("never fires a cancelled deadline, and leaves no timer once nothing waits", () => {
    const deadlines = new Deadlines();
    const fired: number[] = [];
    const first = deadlines.start(100, () => fired.push(1));
    const second = deadlines.start(100, () => fired.push(2));
    first.cancel();
    first.cancel();
    expect(deadlines.waiting).toBe(1);
    second.cancel();
    expect(deadlines.waiting).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(fired).toEqual([]);
  });

  it("re-arms for the oldest waiting deadline when the one it was set for was answered", () => {
    const deadlines = new Deadlines();
    const fired: number[] = [];
    const first = deadlines.start(100, () => fired.push(1));
    vi.advanceTimersByTime(60);
    deadlines.start(100, () => fired.push(2));
    first.cancel();
    vi.advanceTimersByTime(40);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(59);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([2]);
  });

  it("keeps only what waits when one slow request sits behind thousands answered", () => {
    const deadlines = new Deadlines();
    const fired: number[] = [];
    deadlines.start(10_000, () => fired.push(-1));
    for (let i = 0; i < 20_000; i++) deadlines.start(10_000, () => fired.push(i)).cancel();
    const late = deadlines.start(10_000, () => fired.push(20_000));
    expect(deadlines.waiting).toBe(2);
    const lane = (deadlines as unknown as { lanes: Map<number, { entries: unknown[]; head: number }> }).lanes.get(10_000)!;
    expect(lane.entries.length - lane.head).toBeLessThan(5_000);
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual([-1, 20_000]);
    late.cancel();
    expect(deadlines.waiting).toBe(0);
  });

  it("a deadline started by an expiring one's callback is kept", () => {
    const deadlines = new Deadlines();
    const fired: string[] = [];
    deadlines.start(10, () => {
      fired.push("first");
      deadlines.start(10, () => fired.push("again"));
    });
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(["first"]);
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(["first", "again"]);
    expect(deadlines.waiting).toBe(0);
  });

  it("keeps no lane for a timeout length nothing waits on any more", () => {
    const deadlines = new Deadlines();
    const lanes = () => (deadlines as unknown as { lanes: Map<number, unknown> }).lanes.size;
    // Timeouts computed from a caller's deadline come in many lengths.
    const waiting = Array.from({ length: 100 }, (_, i) => deadlines.start(1_000 + i, () => undefined));
    expect(lanes()).toBe(100);
    for (const deadline of waiting.slice(0, 50)) deadline.cancel();
    expect(lanes()).toBe(50);
    vi.advanceTimersByTime(2_000);
    expect(lanes()).toBe(0);
    expect(deadlines.waiting).toBe(0);
    const fired: number[] = [];
    deadlines.start(1_000, () => fired.push(1));
    vi.advanceTimersByTime(1_000);
    expect(fired).toEqual([1]);
  });

  it("fires every deadline not cancelled exactly once, on time, under random starts, cancels and clock steps", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const deadlines = new Deadlines();
    const open: Array<{ id: number; at: number; handle: ReturnType<Deadlines["start"]> }> = [];
    const fired = new Map<number, number>();
    const cancelled = new Set<number>();
    const offTime: number[] = [];
    for (let id = 0; id < 5_000; id++) {
      const ms = [10, 50, 1_000][Math.floor(random() * 3)]!;
      const at = Date.now() + ms;
      const expire = () => {
        fired.set(id, (fired.get(id) ?? 0) + 1);
        if (Date.now() < at || Date.now() > at + 1) offTime.push(id);
      };
      open.push({ id, at, handle: deadlines.start(ms, expire) });
      if (random() < 0.6 && open.length > 0) {
        const [victim] = open.splice(Math.floor(random() * open.length), 1);
        if (!fired.has(victim!.id)) cancelled.add(victim!.id);
        victim!.handle.cancel();
      }
      if (random() < 0.3) vi.advanceTimersByTime(Math.floor(random() * 20));
    }
    vi.advanceTimersByTime(2_000);
    expect(offTime).toEqual([]);
    for (let id = 0; id < 5_000; id++) {
      if (cancelled.has(id)) expect(fired.has(id), `cancelled ${id} fired`).toBe(false);
      else expect(fired.get(id), `deadline ${id}`).toBe(1);
    }
    expect(deadlines.waiting).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
