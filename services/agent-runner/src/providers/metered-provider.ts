import type { Metrics } from "@gw/runtime";
import { decoratedStream, openStream } from "./decorated-stream.js";
import type { ModelChunk, ModelProvider, ModelRequest } from "./model-provider.js";

/** The model-call metrics, shared by every provider's decorator. */
export interface ModelMetrics {
  observe(provider: string, key: string, outcome: "ok" | "error" | "aborted", seconds: number): void;
  tokens(provider: string, kind: "input" | "output", count: number): void;
}

export function modelMetrics(metrics: Metrics): ModelMetrics {
  const duration = metrics.histogram({
    name: "gw_model_call_duration_seconds",
    help: "Time of one call to one provider and key (each attempt of a fallback chain on its own), by provider, key id and outcome.",
    labelNames: ["provider", "key", "outcome"] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  });
  const tokens = metrics.counter({
    name: "gw_model_tokens_total",
    help: "Tokens the providers reported, by provider and kind (input, output).",
    labelNames: ["provider", "kind"] as const,
  });
  return {
    observe: (provider, key, outcome, seconds) => duration.observe({ provider, key, outcome }, seconds),
    tokens: (provider, kind, count) => tokens.inc({ provider, kind }, count),
  };
}

/** Times each call and counts the tokens its usage chunks report. */
export class MeteredProvider implements ModelProvider {
  constructor(
    private readonly inner: ModelProvider,
    private readonly name: string,
    private readonly metrics: ModelMetrics,
    /** The API key's id ("-": keyless). */
    private readonly key = "-",
  ) {}

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    let started = 0;
    return decoratedStream({
      open: () => {
        started = performance.now();
        return openStream(this.inner.stream(request, signal));
      },
      chunk: (chunk) => {
        if (chunk.type !== "usage") return;
        this.metrics.tokens(this.name, "input", chunk.inputTokens);
        this.metrics.tokens(this.name, "output", chunk.outputTokens);
      },
      // A consumer that stops reading early ends the call too: an error, unless it was aborted.
      end: (how) => {
        const outcome = how.kind === "done" ? "ok" : signal.aborted ? "aborted" : "error";
        this.metrics.observe(this.name, this.key, outcome, (performance.now() - started) / 1000);
      },
    });
  }
}
