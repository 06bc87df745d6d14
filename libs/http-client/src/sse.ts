import { createParser, type ParseError } from "eventsource-parser";
import { HttpError } from "./http-error.js";

export interface SseEvent {
  /** The `event:` field, `message` when the server sent none. */
  event: string;
  data: string;
}

export interface ReadSseOptions {
  /** The upstream's name in error messages. */
  name: string;
  /** A stream silent this long has stalled and fails (retryable). */
  idleMs: number;
  signal: AbortSignal;
  /** Characters one event (or one unfinished line) may buffer; a hostile stream stops there. */
  maxEventChars?: number;
}

const DEFAULT_MAX_EVENT_CHARS = 4 * 1024 * 1024;

/** An event stream read a network read at a time. */
export interface SseBatches {
  /**
   * The events the next read completed (none when it ended no event), or undefined once the
   * stream has ended; the last event is yielded even without its closing blank line.
   */
  next(): Promise<SseEvent[] | undefined>;
  /** Stops reading and releases the connection (also done by the end or a failure). */
  close(): void;
}

/**
 * Reads a text/event-stream body (a Node stream, a web ReadableStream or the client's response
 * body) as events, parsed by eventsource-parser: CRLF, LF and bare CR line endings, comments,
 * `id`/`retry` fields and a leading BOM as the WHATWG spec says. Events without data are not
 * given. A read error is a dropped stream and silence for `idleMs` a stalled one, both retryable
 * HttpErrors; the signal firing rethrows its reason. One promise per network read, however many
 * events it carries: a reader that wants events one by one pays for each (readSse).
 */
export function readSseBatches(body: AsyncIterable<Uint8Array>, opts: ReadSseOptions): SseBatches {
  const reader = body[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  let ready: SseEvent[] = [];
  let overflow: ParseError | undefined;
  let open = true;
  const parser = createParser({
    onEvent: (e) => ready.push({ event: e.event ?? "message", data: e.data }),
    onError: (err) => {
      if (err.type === "max-buffer-size-exceeded") overflow = err;
    },
    maxBufferSize: opts.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS,
  });
  const reads = idleReader(reader, opts);
  const close = () => {
    if (!open) return;
    open = false;
    reads.close();
    // Leaving early (done, an error, the consumer stopped) releases the connection.
    reader.return?.()?.catch(() => undefined);
  };
  /** The events fed so far, taken out. */
  const parsed = (): SseEvent[] => {
    if (overflow)
      throw new HttpError(`${opts.name} stream sent an event over ${opts.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS} characters`, {
        kind: "too_large",
        retryable: false,
      });
    const events = ready;
    ready = [];
    return events;
  };
  const onRead = ({ done, value }: IteratorResult<Uint8Array>): SseEvent[] => {
    if (!done) {
      parser.feed(decoder.decode(value, { stream: true }));
      return parsed();
    }
    // Ends an unfinished last line, then the event it belongs to.
    parser.feed(`${decoder.decode()}\n\n`);
    const last = parsed();
    close();
    return last;
  };
  return {
    next() {
      if (!open) return Promise.resolve(undefined);
      return reads.read().then(
        (result) => {
          try {
            return onRead(result);
          } catch (err) {
            close();
            throw err;
          }
        },
        (err: unknown) => {
          close();
          throw err;
        },
      );
    },
    close,
  };
}

/** readSseBatches one event at a time, for a reader that handles each on its own. */
export async function* readSse(body: AsyncIterable<Uint8Array>, opts: ReadSseOptions): AsyncGenerator<SseEvent> {
  const batches = readSseBatches(body, opts);
  try {
    for (let batch = await batches.next(); batch !== undefined; batch = await batches.next()) {
      // Plain yields of an array: an async generator's `yield*` of a sync one wraps each event in promises of its own.
      for (const event of batch) yield event;
    }
  } finally {
    batches.close();
  }
}

/**
 * Reads `reader` under one idle timer for the whole stream, re-armed as each read starts: a
 * read that waits `idleMs` fails. One timer and one promise per read (a timer, a race and its
 * promises per read cost more than the read). A read the timer beat stays observed, so its later
 * failure (the stream torn down) is never an unhandled rejection.
 */
function idleReader(reader: AsyncIterator<Uint8Array>, opts: ReadSseOptions) {
  let fail: ((err: unknown) => void) | undefined;
  const stalled = () => new HttpError(`${opts.name} stream stalled: no data for ${opts.idleMs} ms`, { kind: "timeout", retryable: true });
  const timer = setTimeout(() => fail?.(stalled()), opts.idleMs);
  return {
    read(): Promise<IteratorResult<Uint8Array>> {
      timer.refresh();
      return new Promise((resolve, reject) => {
        fail = reject;
        reader.next().then(
          (result) => {
            fail = undefined;
            resolve(result);
          },
          (cause: unknown) => {
            fail = undefined;
            if (cause instanceof HttpError || opts.signal.aborted) reject(cause);
            else reject(new HttpError(`${opts.name} stream dropped: ${(cause as Error).message}`, { kind: "network", retryable: true, cause }));
          },
        );
      });
    },
    close(): void {
      clearTimeout(timer);
    },
  };
}
