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

/**
 * Reads a text/event-stream body (a Node stream, a web ReadableStream or the client's response
 * body) as events, parsed by eventsource-parser: CRLF, LF and bare CR line endings, comments,
 * `id`/`retry` fields and a leading BOM as the WHATWG spec says. Events without data are not
 * yielded. A last event without its closing blank line is still yielded, since streams that end
 * right after their final event are common. A read error is a dropped stream and silence for
 * `idleMs` a stalled one, both retryable HttpErrors; the signal firing rethrows its reason.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, opts: ReadSseOptions): AsyncGenerator<SseEvent> {
  const reader = body[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  const ready: SseEvent[] = [];
  let overflow: ParseError | undefined;
  const parser = createParser({
    onEvent: (e) => ready.push({ event: e.event ?? "message", data: e.data }),
    onError: (err) => {
      if (err.type === "max-buffer-size-exceeded") overflow = err;
    },
    maxBufferSize: opts.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS,
  });
  const drain = function* (): Generator<SseEvent> {
    if (overflow)
      throw new HttpError(`${opts.name} stream sent an event over ${opts.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS} characters`, {
        kind: "too_large",
        retryable: false,
      });
    for (let i = 0; i < ready.length; i++) yield ready[i]!;
    ready.length = 0;
  };
  try {
    for (;;) {
      const { done, value } = await readWithIdle(reader, opts);
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      yield* drain();
    }
    // Ends an unfinished last line, then the event it belongs to.
    parser.feed(`${decoder.decode()}\n\n`);
    yield* drain();
  } finally {
    // Leaving early (done, an error, the consumer stopped) releases the connection.
    reader.return?.()?.catch(() => undefined);
  }
}

async function readWithIdle(reader: AsyncIterator<Uint8Array>, opts: ReadSseOptions): Promise<IteratorResult<Uint8Array>> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new HttpError(`${opts.name} stream stalled: no data for ${opts.idleMs} ms`, { kind: "timeout", retryable: true }),
        ),
      opts.idleMs,
    );
  });
  // When the idle timer wins, the read it raced stays pending and may fail later (the stream is
  // torn down): observe it now so that failure is never an unhandled rejection.
  const next = reader.next();
  next.catch(() => undefined);
  try {
    return await Promise.race([next, idle]);
  } catch (cause) {
    if (cause instanceof HttpError || opts.signal.aborted) throw cause;
    throw new HttpError(`${opts.name} stream dropped: ${(cause as Error).message}`, { kind: "network", retryable: true, cause });
  } finally {
    clearTimeout(timer);
  }
}
