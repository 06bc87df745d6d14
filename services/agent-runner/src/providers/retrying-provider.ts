import { DEFAULT_RETRY, type RetryPolicy, retryDelayMs } from "@gw/http-client";
import { sleep } from "@gw/runtime";
import { decoratedStream } from "./decorated-stream.js";
import { type ModelChunk, type ModelProvider, type ModelRequest, ProviderError } from "./model-provider.js";

/**
 * Retries a failed call only while nothing has reached the caller: once a chunk was
 * yielded the client has seen it, and replaying the turn would duplicate text.
 */
export class RetryingProvider implements ModelProvider {
  constructor(
    private readonly inner: ModelProvider,
    private readonly policy: RetryPolicy = DEFAULT_RETRY,
  ) {}

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    let attempt = 0;
    return decoratedStream({
      open: async () => {
        for (; ; attempt++) {
          try {
            const inner = this.inner.stream(request, signal)[Symbol.asyncIterator]();
            return { inner, first: await inner.next() };
          } catch (err) {
            const retry = !signal.aborted && err instanceof ProviderError && err.retryable && attempt + 1 < this.policy.attempts;
            if (!retry) throw err;
            await sleep(retryDelayMs(this.policy, attempt, err.retryAfterMs), signal);
          }
        }
      },
      // A failure after the first chunk is never retried; either way it names the tries it took.
      raise: (err) =>
        err instanceof ProviderError && attempt > 0
          ? new ProviderError(`${err.message} (after ${attempt + 1} attempts)`, { status: err.status, retryable: false, cause: err })
          : err,
    });
  }
}
