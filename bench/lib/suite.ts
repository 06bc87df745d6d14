import type { BenchArgs } from "./args.js";

/** One reported figure: the gateway's value, the raw baseline's, and how they compare. */
export interface Figure {
  name: string;
  unit: string;
  gateway: number;
  baseline: number;
  /** gateway / baseline, or another comparison named in `target`. */
  ratio: number;
  /** Human-readable target, e.g. ">= 0.5"; empty when the figure is informational. */
  target: string;
  pass: boolean | null;
}

export type BenchResult =
  | { bench: string; status: "ok"; figures: Figure[]; details: Record<string, unknown> }
  | { bench: string; status: "not available yet" | "failed"; reason: string };

export interface BenchContext {
  args: BenchArgs;
  log(line: string): void;
}

export interface Suite {
  name: string;
  run(ctx: BenchContext): Promise<BenchResult[]>;
  /** Runs only when `--only` names it (a long soak has no place in every run). */
  optIn?: boolean;
}

export function notAvailable(bench: string, reason: string): BenchResult {
  return { bench, status: "not available yet", reason };
}

export function atLeast(name: string, unit: string, gateway: number, baseline: number, min: number): Figure {
  const ratio = baseline > 0 ? Math.round((gateway / baseline) * 1000) / 1000 : Number.NaN;
  return { name, unit, gateway, baseline, ratio, target: `>= ${min}`, pass: ratio >= min };
}

export function atMost(name: string, unit: string, gateway: number, baseline: number, max: number): Figure {
  const ratio = baseline > 0 ? Math.round((gateway / baseline) * 1000) / 1000 : Number.NaN;
  return { name, unit, gateway, baseline, ratio, target: `<= ${max}`, pass: ratio <= max };
}

export function info(name: string, unit: string, gateway: number, baseline: number): Figure {
  const ratio = baseline > 0 ? Math.round((gateway / baseline) * 1000) / 1000 : Number.NaN;
  return { name, unit, gateway, baseline, ratio, target: "", pass: null };
}
