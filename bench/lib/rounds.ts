import { round, Samples } from "./stats.js";
import type { BenchContext } from "./suite.js";
import type { LoadResult } from "./ws-load.js";

/**
 * One result from several rounds of the same measurement: throughput over the summed windows,
 * percentiles over every sample, and each round's throughput kept for the record.
 */
export function pooled(results: LoadResult[]): LoadResult {
  const samples = new Samples();
  let ok = 0;
  let errors = 0;
  let elapsedMs = 0;
  for (const r of results) {
    samples.addAll(r.samples);
    ok += r.ok;
    errors += r.errors;
    elapsedMs += r.elapsedMs;
  }
  const { p50, p99 } = samples.summary();
  return {
    rps: elapsedMs > 0 ? Math.round(ok / (elapsedMs / 1000)) : 0,
    p50Ms: p50,
    p99Ms: p99,
    ok,
    errors,
    elapsedMs: round(elapsedMs, 1),
    samples,
    roundRps: results.map((r) => r.rps),
    roundP50Ms: results.map((r) => r.p50Ms),
  };
}

/**
 * Measures a baseline and its subjects in turn, round after round, and pools each one's rounds.
 * This VM's speed drifts by tens of percent over minutes; measuring the baseline once and the
 * gateway a minute later put that drift into the ratio. Interleaved, a slow minute slows both.
 */
export async function interleaved<K extends string>(
  ctx: BenchContext,
  steps: Record<K, () => Promise<LoadResult>>,
): Promise<Record<K, LoadResult>> {
  const names = Object.keys(steps) as K[];
  const parts = new Map<K, LoadResult[]>(names.map((name) => [name, []]));
  for (let r = 0; r < ctx.args.rounds; r++) {
    for (const name of names) parts.get(name)!.push(await steps[name]());
  }
  return Object.fromEntries(names.map((name) => [name, pooled(parts.get(name)!)])) as Record<K, LoadResult>;
}

/** Warm-up and window of one round: the run's `--seconds` split over its rounds. */
export function roundTiming(ctx: BenchContext): { warmupMs: number; durationMs: number } {
  return {
    warmupMs: ctx.args.quick ? 300 : 500,
    durationMs: Math.max(1_000, Math.round((ctx.args.seconds * 1000) / ctx.args.rounds)),
  };
}
