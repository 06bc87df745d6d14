import { DEFAULT_RETRY, type RetryPolicy, retryDelayMs } from "@gw/http-client";
import { sleep } from "@gw/runtime";
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

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    for (let attempt = 0; ; attempt++) {
      let yielded = false;
      try {
        for await (const chunk of this.inner.stream(request, signal)) {
          yielded = true;
          yield chunk;
        }
        return;
      } catch (err) {
        const retry =
          !yielded && !signal.aborted && err instanceof ProviderError && err.retryable && attempt + 1 < this.policy.attempts;
        if (!retry) {
          if (err instanceof ProviderError && attempt > 0)
            throw new ProviderError(`${err.message} (after ${attempt + 1} attempts)`, {
              status: err.status,
              retryable: false,
              cause: err,
            });
          throw err;
        }
        await sleep(retryDelayMs(this.policy, attempt, err.retryAfterMs), signal);
      }
    }
  }
}
