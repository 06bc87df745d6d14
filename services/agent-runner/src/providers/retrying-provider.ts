import { type ModelChunk, type ModelProvider, type ModelRequest, ProviderError } from "./model-provider.js";

export interface RetryPolicy {
  /** Attempts in total, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** 0..1, injected in tests. */
  random?: () => number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 250, maxDelayMs: 8_000 };

/** Full jitter over an exponential ceiling; a server's Retry-After wins when it asks for longer. */
export function retryDelayMs(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const jittered = Math.round((policy.random ?? Math.random)() * ceiling);
  return retryAfterMs === undefined ? jittered : Math.min(policy.maxDelayMs * 4, Math.max(jittered, retryAfterMs));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

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
