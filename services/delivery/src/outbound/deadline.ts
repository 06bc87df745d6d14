/** An abort signal that fires after `ms` or with `parent`, and what to call once it is not needed. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Clears the timer and unlinks the parent; call it in `finally`. */
  done(): void;
}

/**
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])` without its costs on a hot path: that
 * pair keeps a timer alive for the full `ms` and a weak reference per signal, whether or not the
 * work finished long before (measured: half of delivery's CPU per send went there). This one is
 * cleared as soon as the work is done.
 */
export function deadline(ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("the deadline passed", "TimeoutError")), Math.max(0, ms));
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener("abort", onParentAbort, { once: true });
  return {
    signal: controller.signal,
    done() {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onParentAbort);
    },
  };
}
