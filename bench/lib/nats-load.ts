import { connect } from "@nats-io/transport-node";
import { Samples } from "./stats.js";
import type { LoadResult } from "./ws-load.js";

export interface NatsLoadOptions {
  url: string;
  subject: string;
  /** Concurrent requesters (the same total as WS clients x in-flight). */
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  payload: Uint8Array;
}

/** Closed-loop request/reply over one NATS connection: the raw baseline of the distributed path. */
export async function runNatsLoad(opts: NatsLoadOptions): Promise<LoadResult> {
  const nc = await connect({ servers: opts.url, name: "bench-requester" });
  try {
    const samples = new Samples();
    let ok = 0;
    let errors = 0;
    let phase: "warmup" | "measure" | "drain" = "warmup";
    const loop = async () => {
      while (phase !== "drain") {
        const measured = phase === "measure";
        const at = performance.now();
        try {
          await nc.request(opts.subject, opts.payload, { timeout: 5_000 });
          if (measured && phase === "measure") {
            ok++;
            samples.add(performance.now() - at);
          }
        } catch {
          if (measured) errors++;
        }
      }
    };
    const loops = Array.from({ length: opts.concurrency }, loop);
    await new Promise((r) => setTimeout(r, opts.warmupMs));
    phase = "measure";
    const start = performance.now();
    await new Promise((r) => setTimeout(r, opts.durationMs));
    phase = "drain";
    const elapsedMs = performance.now() - start;
    await Promise.all(loops);
    const { p50, p99 } = samples.summary();
    return { rps: Math.round(ok / (elapsedMs / 1000)), p50Ms: p50, p99Ms: p99, ok, errors, elapsedMs, samples };
  } finally {
    await nc.close();
  }
}
