import { decoratedStream, openStream } from "./decorated-stream.js";
import { type ModelChunk, type ModelProvider, type ModelRequest, ProviderError } from "./model-provider.js";

/**
 * Upstreams quote what they were sent in their error bodies ("invalid key: Bearer sk-…"), and a
 * provider error's message reaches clients: the run's error, its lifecycle event, HTTP bodies.
 * This replaces every configured secret in that message before it leaves the provider layer.
 * The cause keeps the original for the logs, which the logger scrubs of the same secrets.
 */
export class SecretRedactingProvider implements ModelProvider {
  constructor(
    private readonly inner: ModelProvider,
    private readonly scrub: (text: string) => string,
  ) {}

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    return decoratedStream({ open: () => openStream(this.inner.stream(request, signal)), raise: (err) => this.redacted(err) });
  }

  private redacted(err: unknown): unknown {
    if (!(err instanceof ProviderError)) return err;
    const message = this.scrub(err.message);
    if (message === err.message) return err;
    return new ProviderError(message, {
      status: err.status,
      retryable: err.retryable,
      retryAfterMs: err.retryAfterMs,
      cause: err,
    });
  }
}
