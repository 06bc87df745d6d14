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

/** How an open decorated stream takes on the decorations of the streams that wrap it. */
const ADOPT = Symbol("adopt outer decorations");

type Adopting = AsyncIterableIterator<ModelChunk> & { [ADOPT]?: (outer: StreamDecoration[]) => boolean };

/** Every decoration ends as done, innermost first, each after the one before it has. */
function endDone(layers: StreamDecoration[]): void | Promise<void> {
  let ended: void | Promise<void> = undefined;
  for (const layer of layers) {
    if (layer.end === undefined) continue;
    const end = layer.end.bind(layer);
    ended = ended === undefined ? end({ kind: "done" }) : ended.then(() => end({ kind: "done" }));
  }
  return ended;
}

/**
 * Each decoration ends as failed with the error the one inside it raised, and raises its own. A
 * failure before the first chunk is one while opening for every decoration, as each was still
 * opening when it came.
 */
async function failThrough(layers: StreamDecoration[], error: unknown, opening: boolean): Promise<never> {
  let raised = error;
  for (const layer of layers) {
    await layer.end?.({ kind: "failed", error: raised, opening });
    raised = layer.raise ? layer.raise(raised) : raised;
  }
  throw raised;
}

/** Closes the inner stream, then every decoration ends as stopped, even when one before it fails to. */
async function stopThrough(inner: AsyncIterator<ModelChunk>, layers: StreamDecoration[]): Promise<void> {
  let failure: { error: unknown } | undefined;
  try {
    await inner.return?.();
  } catch (error) {
    failure = { error };
  }
  for (const layer of layers) {
    try {
      await layer.end?.({ kind: "stopped" });
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

/**
 * A decorated model stream as a plain async iterator rather than an async generator: a chunk
 * passes each generator layer with four or five promises (its `next()`, the awaited inner
 * `next()`, the `yield`'s own await, the resumption), and a run's chunks passed four such
 * decorators on top of the provider's own, most of the promises a streaming run made (each one
 * also runs the async-context hooks trace propagation needs). Here a chunk costs one `then`.
 * The caller's first `next()` opens the inner stream; `return()` (a caller that stops reading
 * early) closes it; after the end every `next()` answers done.
 *
 * Decorators stack (router over retries over metering over the provider's own): once a stream is
 * open and its inner stream is a decorated stream too, it hands its decoration to that one, which
 * runs every stacked decoration's hooks, innermost first, on each chunk and at the end, as the
 * stack did; the outer iterators only pass calls on. A chunk then costs one `then` however many
 * decorators are stacked, not one each.
 */
export function decoratedStream(d: StreamDecoration): AsyncIterableIterator<ModelChunk> {
  let state: "new" | "opening" | "open" | "over" = "new";
  let inner: AsyncIterator<ModelChunk> | undefined;
  /** This stream's decoration, then those adopted from the streams around it, innermost first. */
  const layers: StreamDecoration[] = [d];
  /** The inner stream this one's decorations moved into: every call goes on to it. */
  let adoptedBy: Adopting | undefined;
  /** The `next()` under way: one asked for meanwhile waits for it, as a generator's would. */
  let current: Promise<IteratorResult<ModelChunk>> | undefined;
  const pass = (result: IteratorResult<ModelChunk>): IteratorResult<ModelChunk> | Promise<IteratorResult<ModelChunk>> => {
    current = undefined;
    if (result.done) {
      state = "over";
      const ended = endDone(layers);
      return ended === undefined ? result : Promise.resolve(ended).then(() => result);
    }
    for (const layer of layers) layer.chunk?.(result.value);
    return result;
  };
  const fail = (error: unknown, opening: boolean): Promise<never> => {
    current = undefined;
    state = "over";
    return failThrough(layers, error, opening);
  };
  const opened = (o: OpenedStream): IteratorResult<ModelChunk> | Promise<IteratorResult<ModelChunk>> => {
    inner = o.inner;
    if (state === "over") {
      // Stopped while it opened: close what was opened.
      current = undefined;
      return Promise.resolve(inner.return?.()).then(over);
    }
    state = "open";
    const first = pass(o.first);
    if (state === "open" && (inner as Adopting)[ADOPT]?.(layers)) adoptedBy = inner as Adopting;
    return first;
  };
  const iterator: Adopting = {
    [Symbol.asyncIterator]: () => iterator,
    [ADOPT](outer: StreamDecoration[]): boolean {
      if (adoptedBy !== undefined) return adoptedBy[ADOPT]!(outer);
      if (state !== "open" || current !== undefined) return false;
      layers.push(...outer);
      return true;
    },
    next() {
      if (adoptedBy !== undefined) return adoptedBy.next();
      if (current !== undefined) return current.then(() => iterator.next(), () => iterator.next());
      if (state === "open") current = inner!.next().then(pass, (err: unknown) => fail(err, false));
      else if (state === "new") {
        state = "opening";
        current = d.open().then(opened, (err: unknown) => fail(err, true));
      } else return over();
      return current;
    },
    async return() {
      if (adoptedBy !== undefined) return adoptedBy.return!();
      const wasOpen = state === "open";
      state = "over";
      if (wasOpen) await stopThrough(inner!, layers);
      return { done: true, value: undefined };
    },
  };
  return iterator;
}
