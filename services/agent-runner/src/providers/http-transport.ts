import { Agent as HttpAgent, type IncomingHttpHeaders, type IncomingMessage, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { ProviderError } from "./model-provider.js";

/**
 * Provider calls go over node:http with keep-alive pools rather than fetch(): fetch builds
 * web streams, abort signals and header objects per call, which cost more CPU per model turn
 * than the rest of a run's path through the gateway (bench/README.md).
 */
const agents = {
  "http:": new HttpAgent({ keepAlive: true, scheduling: "lifo" }),
  "https:": new HttpsAgent({ keepAlive: true, scheduling: "lifo" }),
};

export interface ProviderResponse {
  status: number;
  ok: boolean;
  headers: IncomingHttpHeaders;
  /** The response body; it is destroyed when the caller's signal fires, mid-stream too. */
  body: AsyncIterable<Uint8Array>;
  /** The raw response, for reading error bodies. */
  raw: IncomingMessage;
}

/** How long a body left unread (the reader stopped at `[DONE]`) may take to end before it is cut. */
const DRAIN_MS = 2_000;

/**
 * The body as an async iterable that keeps the connection reusable: a reader that stops early
 * (a stream's last event usually arrives just before the response ends) lets the rest drain
 * in the background instead of destroying the socket, which would cost a new connection and
 * TCP handshake on the next model turn.
 */
function reusableBody(res: IncomingMessage): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      const inner = res[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
      return {
        next: () => inner.next(),
        return: async () => {
          if (!res.readableEnded && !res.destroyed) {
            const cut = setTimeout(() => res.destroy(), DRAIN_MS);
            res.once("close", () => clearTimeout(cut));
            res.resume();
          }
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/**
 * POSTs `body` and waits for the response headers at most `timeoutMs`; the body is not covered
 * by that timer (the SSE reader has its own idle limit). Failing before a response (refused,
 * reset, DNS) or no headers in time is a retryable ProviderError; the signal firing rejects
 * with its reason.
 */
export function providerPost(
  provider: string,
  url: string,
  init: { headers: Record<string, string>; body: string },
  opts: { signal: AbortSignal; timeoutMs: number },
): Promise<ProviderResponse> {
  opts.signal.throwIfAborted();
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : target.protocol === "http:" ? httpRequest : undefined;
  if (send === undefined)
    return Promise.reject(new ProviderError(`${provider}: unsupported URL scheme in ${url}`, { retryable: false }));
  const payload = Buffer.from(init.body, "utf8");
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const req = send(target, {
      method: "POST",
      agent: agents[target.protocol as keyof typeof agents],
      headers: { ...init.headers, "content-length": String(payload.length) },
    });
    const onAbort = () => req.destroy(opts.signal.reason as Error);
    opts.signal.addEventListener("abort", onAbort, { once: true });
    // The abort link stays while the body streams: aborting the run cancels the response too.
    const unlink = () => opts.signal.removeEventListener("abort", onAbort);
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy();
    }, opts.timeoutMs);
    req.once("response", (res) => {
      clearTimeout(timer);
      res.once("close", unlink);
      const status = res.statusCode ?? 0;
      resolve({ status, ok: status >= 200 && status < 300, headers: res.headers, body: reusableBody(res), raw: res });
    });
    req.once("error", (cause) => {
      clearTimeout(timer);
      unlink();
      if (opts.signal.aborted) return reject(opts.signal.reason);
      const reason = timedOut ? `no answer within ${opts.timeoutMs} ms` : cause.message;
      reject(new ProviderError(`cannot reach ${provider} at ${url}: ${reason}`, { retryable: true, cause }));
    });
    req.end(payload);
  });
}

/** Reads at most `max` bytes of a body and drops the rest. */
async function readSome(body: IncomingMessage, max: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const part of body as AsyncIterable<Buffer>) {
      parts.push(part);
      size += part.length;
      if (size >= max) break;
    }
  } catch {
    // a broken error body: the status says enough
  }
  body.destroy();
  return Buffer.concat(parts).toString("utf8").slice(0, max);
}

/** Seconds or an HTTP date, as in `Retry-After`; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null | undefined): number | undefined {
  if (header === null || header === undefined || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Turns a non-2xx response into a ProviderError with the provider's own message when it sent one. */
export async function httpError(provider: string, res: ProviderResponse): Promise<ProviderError> {
  const text = await readSome(res.raw, 2_000);
  let detail = "";
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    detail = typeof body.error === "string" ? body.error : (body.error?.message ?? body.message ?? text);
  } catch {
    // not JSON: the status says enough
  }
  const retryable = res.status === 429 || res.status === 408 || res.status >= 500;
  const retryAfter = res.headers["retry-after"];
  return new ProviderError(`${provider} answered HTTP ${res.status}${detail ? `: ${detail}` : ""}`, {
    status: res.status,
    retryable,
    retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
  });
}
