/**
 * How long to wait before trying again: one policy for every retry and poll loop in the tree
 * (HTTP calls, platform sends, the outbox, inbound sessions and receivers, claims waited on), so
 * each names its numbers and none re-derives the arithmetic or the abortable wait.
 */
export interface BackoffPolicy {
  /** The first wait (attempt 0), doubled on each attempt after it. */
  baseMs: number;
  /** No wait is longer. */
  capMs: number;
  /**
   * "full": a uniformly random wait up to the doubled ceiling, so replicas that failed together
   * do not all try again together; "none": the ceiling itself (one process's own poll or queue).
   */
  jitter: "full" | "none";
  /** 0..1, injected in tests (default Math.random). */
  random?: () => number;
}

/** The wait before retry number `attempt` (0 for the first): min(capMs, baseMs * 2^attempt), jittered as the policy says. */
export function retryDelay(attempt: number, policy: BackoffPolicy): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt));
  if (policy.jitter === "none") return ceiling;
  return Math.round((policy.random ?? Math.random)() * ceiling);
}

/** Waits `ms`; rejects with the signal's own reason when it fires first (at once when it already has). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
