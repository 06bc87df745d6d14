import { beginSpan, currentTrace, type OpenSpan, startSpan, tracingEnabled } from "@gw/bus";
import type { ModelChunk, ModelProvider, ModelRequest } from "./model-provider.js";

/**
 * Records each model call as a client span of the run's trace (GenAI semantic conventions:
 * provider, model, tokens, why it stopped) when tracing is on; off, it hands the inner stream
 * through untouched.
 */
export class TracedProvider implements ModelProvider {
  constructor(
    private readonly inner: ModelProvider,
    private readonly name: string,
  ) {}

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    const parent = tracingEnabled() ? currentTrace() : undefined;
    const span = parent?.sampled ? beginSpan("agent-runner", `chat ${request.model}`, "client", startSpan(parent)) : undefined;
    if (span === undefined) return this.inner.stream(request, signal);
    span.set("gen_ai.operation.name", "chat").set("gen_ai.provider.name", this.name).set("gen_ai.request.model", request.model);
    return this.traced(span, request, signal);
  }

  private async *traced(span: OpenSpan, request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    let error: string | undefined = "ERROR";
    try {
      for await (const chunk of this.inner.stream(request, signal)) {
        if (chunk.type === "usage") {
          span.set("gen_ai.usage.input_tokens", chunk.inputTokens).set("gen_ai.usage.output_tokens", chunk.outputTokens);
        } else if (chunk.type === "stop") {
          span.set("gen_ai.response.finish_reasons", chunk.reason);
        }
        yield chunk;
      }
      error = undefined;
    } finally {
      // A consumer that stops reading early (return()) ends here too: the call is over.
      span.end(error !== undefined && signal.aborted ? "ABORTED" : error);
    }
  }
}
