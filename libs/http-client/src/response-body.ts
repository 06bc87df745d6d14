import type { Dispatcher } from "undici";

type RawBody = Dispatcher.ResponseData["body"];

/** A body left unread (a reader that stopped at `[DONE]`) gets this long to end before it is cut. */
const DRAIN_MS = 2_000;
/** …and at most this much more data; a longer rest costs less as a new connection. */
const DRAIN_BYTES = 64 * 1024;

/**
 * A response body as an async iterable that keeps its connection reusable: a reader that stops
 * early (a stream's last event usually arrives just before the response ends) lets the rest
 * drain in the background instead of destroying the socket, which would cost a new connection
 * and handshake on the next call. Read errors come out mapped to the client's error types.
 */
export class ResponseBody implements AsyncIterable<Uint8Array> {
  constructor(
    private readonly raw: RawBody,
    private readonly mapError: (err: unknown) => unknown,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    const inner = this.raw.iterator({ destroyOnReturn: false }) as AsyncIterator<Uint8Array>;
    return {
      // One promise per read (a `then`), not an async function's two.
      next: () =>
        inner.next().then(undefined, (err: unknown) => {
          throw this.mapError(err);
        }),
      return: async () => {
        await inner.return?.();
        this.release();
        return { done: true, value: undefined };
      },
    };
  }

  /** Reads nothing more; the rest drains in the background and the connection goes back to the pool. */
  release(): void {
    const raw = this.raw;
    if (raw.readableEnded || raw.destroyed) return;
    const cut = setTimeout(() => raw.destroy(), DRAIN_MS);
    raw.once("close", () => clearTimeout(cut));
    raw.on("error", () => undefined);
    let left = DRAIN_BYTES;
    // A 'data' listener resumes the stream; the iterator took its own listener off on return.
    raw.on("data", (chunk: Buffer) => {
      left -= chunk.length;
      if (left < 0) raw.destroy();
    });
  }

  /** Drops the body and its connection (a download over its limit). */
  cancel(): void {
    this.raw.destroy();
  }
}
