import { Agent, request } from "node:http";
import { Samples } from "./stats.js";

export interface BurstOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Streams opened at once. */
  count: number;
  /** Content pieces every stream must deliver (the fake's `word0 ` ... `word<n-1> `). */
  expectedWords: number;
  timeoutMs: number;
}

export interface BurstResult {
  count: number;
  /** Streams that ended with every word, in order. */
  complete: number;
  failed: number;
  /** From the first request sent to the last stream's end. */
  wallMs: number;
  /** Time to the first content chunk, per stream. */
  ttfcP50Ms: number;
  ttfcP99Ms: number;
  /** Why streams were not whole: each distinct reason (status, error, the body's end) and its count. */
  failures: Record<string, number>;
}

/** The assistant text of an OpenAI chat-completions SSE body (`choices[0].delta.content`), and an error chunk's message. */
function streamedText(body: string): { text: string; error?: string } {
  let text = "";
  let error: string | undefined;
  for (const line of body.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const chunk = JSON.parse(line.slice(6)) as { choices?: Array<{ delta?: { content?: string } }>; error?: { message?: string } };
    text += chunk.choices?.[0]?.delta?.content ?? "";
    if (chunk.error !== undefined) error = chunk.error.message ?? "error";
  }
  return error === undefined ? { text } : { text, error };
}

/** Why a 200 stream was not whole: its error chunk, or which of the expected words are missing. */
function whyNotWhole(streamed: { text: string; error?: string }, words: number): string {
  if (streamed.error !== undefined) return `error chunk: ${streamed.error.replace(/\(request id \w+\)/, "").trim().slice(0, 120)}`;
  const got = new Set(streamed.text.split(" ").filter(Boolean));
  const missing = Array.from({ length: words }, (_, i) => `word${i}`).filter((w) => !got.has(w));
  if (missing.length === 0) return "every word, out of order or repeated";
  return `missing ${missing.length} of ${words} words${missing.length === words ? "" : " (some mid-stream)"}`;
}

function expectedText(words: number): string {
  return Array.from({ length: words }, (_, i) => `word${i} `).join("");
}

/** One streaming POST: when its first content arrived (ms after `t0`), and whether it was whole. */
function oneStream(agent: Agent, opts: BurstOptions, t0: number): Promise<{ ttfcMs: number; whole: boolean; why?: string }> {
  return new Promise((resolve) => {
    let ttfcMs = Number.NaN;
    const req = request(
      opts.url,
      { method: "POST", agent, headers: { "content-type": "application/json", ...opts.headers } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (Number.isNaN(ttfcMs) && chunk.includes('"content"')) ttfcMs = performance.now() - t0;
          body += chunk;
        });
        res.on("end", () => {
          const tail = () => `${res.statusCode}: ${body.trim().split("\n").slice(-2).join(" ").slice(0, 160)}`;
          if (res.statusCode !== 200) return resolve({ ttfcMs, whole: false, why: tail() });
          try {
            const streamed = streamedText(body);
            const whole = streamed.error === undefined && streamed.text === expectedText(opts.expectedWords);
            resolve({ ttfcMs, whole, ...(whole ? {} : { why: whyNotWhole(streamed, opts.expectedWords) }) });
          } catch {
            resolve({ ttfcMs, whole: false, why: `not SSE: ${tail()}` });
          }
        });
        res.on("error", (err) => resolve({ ttfcMs, whole: false, why: `response: ${err.message}` }));
      },
    );
    req.setTimeout(opts.timeoutMs, () => req.destroy(new Error("timed out")));
    req.on("error", (err) => resolve({ ttfcMs, whole: false, why: `request: ${err.message}` }));
    req.end(opts.body);
  });
}

/**
 * Opens `count` streaming requests at once, each on its own connection, and waits for all of
 * them: wall time, time-to-first-chunk percentiles, and how many delivered every word in order.
 */
export async function streamBurst(opts: BurstOptions): Promise<BurstResult> {
  const agent = new Agent({ keepAlive: false, maxSockets: opts.count });
  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: opts.count }, () => oneStream(agent, opts, t0)));
  const wallMs = performance.now() - t0;
  agent.destroy();
  const ttfc = new Samples();
  for (const o of outcomes) if (!Number.isNaN(o.ttfcMs)) ttfc.add(o.ttfcMs);
  const complete = outcomes.filter((o) => o.whole).length;
  const { p50, p99 } = ttfc.summary();
  const failures: Record<string, number> = {};
  for (const o of outcomes) if (o.why !== undefined) failures[o.why] = (failures[o.why] ?? 0) + 1;
  return { count: opts.count, complete, failed: opts.count - complete, wallMs: Math.round(wallMs), ttfcP50Ms: p50, ttfcP99Ms: p99, failures };
}
