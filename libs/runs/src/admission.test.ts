import { describe, expect, it } from "vitest";
import { Admission, type LagSampler } from "./admission.js";

/** An admission whose windows the test drives by hand (no sampler, no timer). */
function admission(maxConcurrent: number, active: { n: number }) {
  const manual: LagSampler | null = null;
  return new Admission({ maxConcurrent, maxLagMs: 100 }, () => active.n, manual);
}

describe("Admission", () => {
  it("starts below the ceiling and raises the limit by half per window the loop keeps up while the runs use it", () => {
    const active = { n: 0 };
    const gate = admission(2048, active);
    expect(gate.limit).toBe(256);
    const limits: number[] = [];
    for (let i = 0; i < 5; i++) {
      active.n = gate.limit;
      gate.window(5);
      limits.push(gate.limit);
    }
    expect(limits).toEqual([384, 576, 864, 1296, 1944]);
    active.n = gate.limit;
    gate.window(5);
    expect(gate.limit).toBe(2048);
  });

  it("restores a cut limit to where it started in the first window the loop keeps up, busy or not", () => {
    const active = { n: 200 };
    const gate = admission(2048, active);
    gate.window(250);
    gate.window(250);
    expect(gate.limit).toBe(112);
    active.n = 0;
    gate.window(5);
    expect(gate.limit).toBe(256);
  });

  it("does not raise the limit while the runs use less than half of it", () => {
    const active = { n: 100 };
    const gate = admission(2048, active);
    gate.window(5);
    expect(gate.limit).toBe(256);
  });

  it("cuts the limit below the runs in hand when the loop falls behind, never under 32 or the ceiling", () => {
    const active = { n: 200 };
    const gate = admission(2048, active);
    gate.window(250);
    expect(gate.limit).toBe(150);
    active.n = 10;
    gate.window(250);
    expect(gate.limit).toBe(32);
    const small = admission(8, { n: 8 });
    small.window(250);
    expect(small.limit).toBe(8);
  });

  it("tells its listeners after every window, and is the ceiling alone when switched off", () => {
    const active = { n: 0 };
    const gate = admission(64, active);
    let heard = 0;
    gate.onWindow(() => heard++);
    gate.window(5);
    gate.window(500);
    expect(heard).toBe(2);
    expect(new Admission({ maxConcurrent: 64, maxLagMs: 0 }, () => 0).limit).toBe(64);
  });

  it("samples the real event loop when none is given", async () => {
    const gate = new Admission({ maxConcurrent: 8, maxLagMs: 100, windowMs: 20 }, () => 8);
    let heard = 0;
    gate.onWindow(() => heard++);
    await new Promise((resolve) => setTimeout(resolve, 200));
    gate.stop();
    expect(heard).toBeGreaterThan(0);
  });
});
