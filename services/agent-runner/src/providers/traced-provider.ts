import { beginSpan, currentTrace, type OpenSpan, startSpan, tracingEnabled } from "@gw/bus";
import { decoratedStream, openStream } from "./decorated-stream.js";
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

  private traced(span: OpenSpan, request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    return decoratedStream({
      open: () => openStream(this.inner.stream(request, signal)),
      chunk: (chunk) => {
        if (chunk.type === "usage") {
          span.set("gen_ai.usage.input_tokens", chunk.inputTokens).set("gen_ai.usage.output_tokens", chunk.outputTokens);
        } else if (chunk.type === "stop") {
          span.set("gen_ai.response.finish_reasons", chunk.reason);
        }
      },
      // A consumer that stops reading early ends the call too.
      end: (how) => span.end(how.kind === "done" ? undefined : signal.aborted ? "ABORTED" : "ERROR"),
    });
  }
}
