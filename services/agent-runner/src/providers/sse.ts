import { ProviderError } from "./model-provider.js";

export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Reads a text/event-stream body as events. A stream silent for `idleMs` is a stalled
 * stream and fails (retryable), as does a read error (a dropped connection).
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  opts: { provider: string; idleMs: number; signal: AbortSignal },
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
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
    reader.cancel().catch(() => undefined);
  }
}

async function readWithIdle(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  opts: { provider: string; idleMs: number; signal: AbortSignal },
): Promise<Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>> {
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
    return await Promise.race([reader.read(), idle]);
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
