import { Agent, request } from "node:http";
import { Samples } from "./stats.js";
import type { LoadResult } from "./ws-load.js";

export interface HttpLoadOptions {
  url: string;
  /** The request body, or a maker of one per request (unique idempotency keys). */
  body: string | (() => string);
  headers: Record<string, string>;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

/** One POST, resolved when the whole body (a JSON answer or an SSE stream) has arrived. */
function post(agent: Agent, opts: HttpLoadOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      opts.url,
      { method: "POST", agent, headers: { "content-type": "application/json", ...opts.headers } },
      (res) => {
        res.on("data", () => undefined);
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error("no answer")));
    req.on("error", reject);
    req.end(typeof opts.body === "function" ? opts.body() : opts.body);
  });
}

/** Closed-loop HTTP load over keep-alive connections; only 200s count as throughput. */
export async function runHttpLoad(opts: HttpLoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const samples = new Samples();
  let ok = 0;
  let errors = 0;
  let phase: "warmup" | "measure" | "drain" = "warmup";
  const loop = async () => {
    while (phase !== "drain") {
      const measured = phase === "measure";
      const at = performance.now();
      const status = await post(agent, opts).catch(() => 0);
      if (!measured || phase !== "measure") continue;
      if (status === 200) {
        ok++;
        samples.add(performance.now() - at);
      } else errors++;
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
  agent.destroy();
  const { p50, p99 } = samples.summary();
  return { rps: Math.round(ok / (elapsedMs / 1000)), p50Ms: p50, p99Ms: p99, ok, errors, elapsedMs, samples };
}
