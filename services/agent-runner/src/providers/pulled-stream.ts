/** What one pull gave: items to hand out, then (optionally) the end of the stream or its failure. */
export interface Pulled<T> {
  items: T[];
  done: boolean;
  /** Thrown once `items` are handed out: what came before a failure still reaches the reader. */
  error?: unknown;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * An async iterator over items that arrive in batches (a network read's worth of events): items
 * already pulled are answered from a queue, one resolved promise each, and `pull` runs only when
 * it is empty. An async generator costs four or five promises per item, and as many again for each
 * generator it reads from. After the end, a failure or `return()`, every `next()` answers done;
 * `close` runs once, at the first of those.
 */
export function pulledStream<T>(pull: () => Promise<Pulled<T>>, close: () => void): AsyncIterableIterator<T> {
  let queue: T[] = [];
  let head = 0;
  let ending: Pick<Pulled<T>, "done" | "error"> | undefined;
  let over = false;
  let pulling: Promise<IteratorResult<T>> | undefined;
  const finish = () => {
    if (over) return;
    over = true;
    queue = [];
    close();
  };
  /** The next answer the queue holds, a failure to throw, or undefined when it needs a pull. */
  const take = (): IteratorResult<T> | undefined => {
    if (head < queue.length) return { done: false, value: queue[head++]! };
    if (ending === undefined) return over ? DONE : undefined;
    const { error } = ending;
    ending = undefined;
    finish();
    if (error !== undefined) throw error;
    return DONE;
  };
  const refill = (batch: Pulled<T>): IteratorResult<T> | Promise<IteratorResult<T>> => {
    pulling = undefined;
    if (over) return DONE;
    queue = batch.items;
    head = 0;
    if (batch.done || batch.error !== undefined) ending = batch;
    return take() ?? iterator.next();
  };
  const failed = (err: unknown): never => {
    pulling = undefined;
    finish();
    throw err;
  };
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    next() {
      if (pulling !== undefined) return pulling.then(() => iterator.next(), () => iterator.next());
      try {
        const ready = take();
        if (ready !== undefined) return Promise.resolve(ready);
      } catch (err) {
        return Promise.reject(err);
      }
      pulling = pull().then(refill, failed);
      return pulling;
    },
    return() {
      finish();
      return Promise.resolve(DONE);
    },
  };
  return iterator;
}
