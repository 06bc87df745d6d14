import { ProviderError } from "./model-provider.js";

export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Reads a text/event-stream body (a Node stream or a web ReadableStream) as events. A stream silent for `idleMs` is a stalled
 * stream and fails (retryable), as does a read error (a dropped connection).
 */
export async function* readSse(
  body: AsyncIterable<Uint8Array>,
  opts: { provider: string; idleMs: number; signal: AbortSignal },
): AsyncGenerator<SseEvent> {
  const reader = body[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await readWithIdle(reader, opts);
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline !== -1) {
        const line = buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
        if (line === "") {
          if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
        } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        else if (line.startsWith("event:")) event = line.slice(6).trim();
      }
    }
    if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
  } finally {
    // Leaving early (done, an error, the consumer stopped) releases the connection.
    reader.return?.()?.catch(() => undefined);
  }
}

async function readWithIdle(
  reader: AsyncIterator<Uint8Array>,
  opts: { provider: string; idleMs: number; signal: AbortSignal },
): Promise<IteratorResult<Uint8Array>> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new ProviderError(`${opts.provider} stream stalled: no data for ${opts.idleMs} ms`, {
            retryable: true,
          }),
        ),
      opts.idleMs,
    );
  });
  try {
    return await Promise.race([reader.next(), idle]);
  } catch (cause) {
    if (cause instanceof ProviderError || opts.signal.aborted) throw cause;
    throw new ProviderError(`${opts.provider} stream dropped: ${(cause as Error).message}`, {
      retryable: true,
      cause,
    });
  } finally {
    clearTimeout(timer);
  }
}
