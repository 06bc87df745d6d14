import type { ModelChunk } from "./model-provider.js";

/** How a decorated call went for its decorator: `opening` when it failed before any result. */
export type StreamEnd = { kind: "done" } | { kind: "failed"; error: unknown; opening: boolean } | { kind: "stopped" };

/** An inner stream opened, with its first result read. */
export interface OpenedStream {
  inner: AsyncIterator<ModelChunk>;
  first: IteratorResult<ModelChunk>;
}

/** What a provider decorator does around the stream it wraps. */
export interface StreamDecoration {
  /**
   * Opens the inner stream and reads its first result, on the caller's first `next()`: what a
   * decorator does before anything reaches the caller (another try, a fallback) happens here.
   */
  open(): Promise<OpenedStream>;
  /** Each chunk on its way to the caller, the first one included. */
  chunk?(chunk: ModelChunk): void;
  /** Once: how the call ended. The caller's last `next()` (or `return()`) waits for it. */
  end?(how: StreamEnd): void | Promise<void>;
  /** The error the caller gets for a failure (the opening's or a later one): by default, the failure. */
  raise?(err: unknown): unknown;
}

/** Opens `stream` and reads its first result: `StreamDecoration.open` for a decorator that tries once. */
export function openStream(stream: AsyncIterable<ModelChunk>): Promise<OpenedStream> {
  const inner = stream[Symbol.asyncIterator]();
  return inner.next().then((first) => ({ inner, first }));
}

const over = (): Promise<IteratorResult<ModelChunk>> => Promise.resolve({ done: true, value: undefined });

/**
 * A decorated model stream as a plain async iterator rather than an async generator: a chunk
 * passes each generator layer with four or five promises (its `next()`, the awaited inner
 * `next()`, the `yield`'s own await, the resumption), and a run's chunks passed four such
 * decorators on top of the provider's own, most of the promises a streaming run made (each one
 * also runs the async-context hooks trace propagation needs). Here a chunk costs one `then`.
 * The caller's first `next()` opens the inner stream; `return()` (a caller that stops reading
 * early) closes it; after the end every `next()` answers done.
 */
export function decoratedStream(d: StreamDecoration): AsyncIterableIterator<ModelChunk> {
  let state: "new" | "opening" | "open" | "over" = "new";
  let inner: AsyncIterator<ModelChunk> | undefined;
  const end = (how: StreamEnd) => {
    state = "over";
    return d.end?.(how);
  };
  /** The `next()` under way: one asked for meanwhile waits for it, as a generator's would. */
  let current: Promise<IteratorResult<ModelChunk>> | undefined;
  const pass = (result: IteratorResult<ModelChunk>): IteratorResult<ModelChunk> | Promise<IteratorResult<ModelChunk>> => {
    current = undefined;
    if (result.done) {
      const ended = end({ kind: "done" });
      return ended === undefined ? result : Promise.resolve(ended).then(() => result);
    }
    d.chunk?.(result.value);
    return result;
  };
  const fail = async (error: unknown, opening: boolean): Promise<never> => {
    current = undefined;
    await end({ kind: "failed", error, opening });
    throw d.raise ? d.raise(error) : error;
  };
  const opened = (o: OpenedStream): IteratorResult<ModelChunk> | Promise<IteratorResult<ModelChunk>> => {
    inner = o.inner;
    if (state === "over") {
      // Stopped while it opened: close what was opened.
      current = undefined;
      return Promise.resolve(inner.return?.()).then(over);
    }
    state = "open";
    return pass(o.first);
  };
  const iterator: AsyncIterableIterator<ModelChunk> = {
    [Symbol.asyncIterator]: () => iterator,
    next() {
      if (current !== undefined) return current.then(() => iterator.next(), () => iterator.next());
      if (state === "open") current = inner!.next().then(pass, (err: unknown) => fail(err, false));
      else if (state === "new") {
        state = "opening";
        current = d.open().then(opened, (err: unknown) => fail(err, true));
      } else return over();
      return current;
    },
    async return() {
      const wasOpen = state === "open";
      state = "over";
      if (wasOpen) {
        try {
          await inner!.return?.();
        } finally {
          await d.end?.({ kind: "stopped" });
        }
      }
      return { done: true, value: undefined };
    },
  };
  return iterator;
}
