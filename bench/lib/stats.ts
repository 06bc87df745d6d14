/** Percentile of already sorted samples (nearest rank), in the samples' unit. */
export function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Growable store of latency samples in milliseconds; typed array so 1M samples stay cheap. */
export class Samples {
  private data = new Float64Array(1 << 16);
  private count = 0;

  add(ms: number): void {
    if (this.count === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.count++] = ms;
  }

  get size(): number {
    return this.count;
  }

  /** Adds every sample of `other` (pooling the rounds of one measurement). */
  addAll(other: Samples): void {
    for (let i = 0; i < other.count; i++) this.add(other.data[i]!);
  }

  /** Results files keep the count, not a million numbers. */
  toJSON(): { count: number } {
    return { count: this.count };
  }

  summary(): { p50: number; p99: number } {
    const sorted = this.data.slice(0, this.count).sort();
    return { p50: round(percentile(sorted, 50), 3), p99: round(percentile(sorted, 99), 3) };
  }
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function ratio(numerator: number, denominator: number): number {
  return denominator > 0 ? round(numerator / denominator, 3) : Number.NaN;
}

/** The middle value (the upper one of an even count), ignoring NaN; NaN when nothing is left. */
export function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!;
}
