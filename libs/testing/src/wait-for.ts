export interface WaitForOptions {
  /** Give up after this long (default 5 000 ms). */
  timeoutMs?: number;
  /** Pause between attempts (default 25 ms). */
  intervalMs?: number;
  /** Named in the timeout error so a failing test says what never happened. */
  what?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `fn` until it returns something other than `undefined`. Exceptions count as "not yet"
 * (servers refuse connections while they boot); the last one is attached as the cause.
 */
export async function waitFor<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  opts: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const intervalMs = opts.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    const left = deadline - Date.now();
    if (left <= 0) break;
    await sleep(Math.min(intervalMs, left));
  }
  const detail = lastError instanceof Error ? `: ${lastError.message}` : "";
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? "a condition"}${detail}`, {
    cause: lastError,
  });
}

/** Polls `check` until it holds: `waitFor` for a yes-or-no condition. */
export async function waitUntil(check: () => boolean | Promise<boolean>, opts: WaitForOptions = {}): Promise<void> {
  await waitFor(async () => ((await check()) ? true : undefined), opts);
}
