/** prom-client samples the event loop with a 10 ms timer (createMetrics sets this precision). */
const SAMPLING_INTERVAL_S = 0.01;

/**
 * A process's own event-loop delay p99 since the previous scrape (Node's metrics from
 * prom-client, `nodejs_eventloop_lag_p99_seconds`, reset by every scrape), net of the 10 ms
 * sampling interval (an idle loop reads the interval itself), in ms; NaN without a metrics port.
 */
export async function eventLoopP99(metricsPort: number | undefined): Promise<number> {
  if (metricsPort === undefined) return Number.NaN;
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const match = /^nodejs_eventloop_lag_p99_seconds\{[^}]*\} ([0-9.e+-]+)$/m.exec(text);
  return match ? Math.max(0, Number(match[1]) - SAMPLING_INTERVAL_S) * 1000 : Number.NaN;
}

/** A process's memory as Node reports it (prom-client's defaults), in MiB; NaN where it has no metrics port. */
export interface ProcessMemory {
  /** V8 heap in use: climbs under a leak of JS objects. */
  heapUsed: number;
  /** V8 heap reserved: what V8 sized the heap up to. */
  heapTotal: number;
  /** Memory outside the V8 heap that JS objects hold (Buffers, ArrayBuffers). */
  external: number;
  /**
   * V8's young generation reserved (`space="new"`): V8 grows it under allocation pressure up to
   * its cap and shrinks it when allocation slows, which moves RSS with no object retained.
   */
  newSpace: number;
  /** Seconds spent in garbage collection since start, every kind (not memory: its cost, same scrape). */
  gcSeconds: number;
}

export async function processMemoryMiB(metricsPort: number | undefined): Promise<ProcessMemory> {
  const none = { heapUsed: Number.NaN, heapTotal: Number.NaN, external: Number.NaN, newSpace: Number.NaN, gcSeconds: Number.NaN };
  if (metricsPort === undefined) return none;
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const gauge = (name: string) => {
    const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, "m").exec(text);
    return match ? Number(match[1]) / 2 ** 20 : Number.NaN;
  };
  return {
    heapUsed: gauge("nodejs_heap_size_used_bytes"),
    heapTotal: gauge("nodejs_heap_size_total_bytes"),
    external: gauge("nodejs_external_memory_bytes"),
    newSpace: gauge('nodejs_heap_space_size_total_bytes\\{[^}]*space="new"[^}]*\\}'),
    gcSeconds: [...text.matchAll(/^nodejs_gc_duration_seconds_sum\{[^}]*\} ([0-9.e+-]+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0),
  };
}
