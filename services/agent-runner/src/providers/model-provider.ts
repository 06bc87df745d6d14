/**
 * The ModelProvider port: one streaming chat call. Adapters: openai (any
 * chat-completions server), anthropic (Messages API), builtin (offline echo).
 * Provider-neutral messages and chunks, so the agent loop never sees a wire format.
 */

export type Thinking = "low" | "medium" | "high" | "extended";

export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export type ChatMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string; isError?: boolean };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the tool's input object. */
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  thinking?: Thinking;
}

export type ModelChunk =
  | { type: "text"; text: string }
  | { type: "thinking" }
  | { type: "tool_call"; call: ToolCall }
  | { type: "usage"; inputTokens: number; outputTokens: number };

export interface ModelProvider {
  /** Streams one model turn; throws ProviderError on failure, an AbortError when `signal` fires. */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk>;
}

/** A provider failure; `retryable` is true for 429, 5xx and connection or stream failures. */
export class ProviderError extends Error {
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    opts: { status?: number; retryable: boolean; retryAfterMs?: number; cause?: unknown },
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "ProviderError";
    this.status = opts.status;
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Seconds or an HTTP date, as in `Retry-After`; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Turns a non-2xx response into a ProviderError with the provider's own message when it sent one. */
export async function httpError(provider: string, res: Response): Promise<ProviderError> {
  let detail = "";
  try {
    const text = (await res.text()).slice(0, 2_000);
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    detail = typeof body.error === "string" ? body.error : (body.error?.message ?? body.message ?? text);
  } catch {
    // not JSON: the status says enough
  }
  const retryable = res.status === 429 || res.status === 408 || res.status >= 500;
  return new ProviderError(
    `${provider} answered HTTP ${res.status}${detail ? `: ${detail}` : ""}`,
    { status: res.status, retryable, retryAfterMs: parseRetryAfter(res.headers.get("retry-after")) },
  );
}

/**
 * POSTs and waits for the response headers at most `timeoutMs`; the body is not covered by
 * that timer (the SSE reader has its own idle limit). fetch() failing before a response
 * (refused, reset, DNS) or no headers in time is a retryable error.
 */
export async function providerFetch(
  provider: string,
  url: string,
  init: RequestInit,
  opts: { signal: AbortSignal; timeoutMs: number },
): Promise<Response> {
  opts.signal.throwIfAborted();
  const controller = new AbortController();
  const onAbort = () => controller.abort(opts.signal.reason);
  opts.signal.addEventListener("abort", onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, opts.timeoutMs);
  try {
    return await fetch(url, { ...init, signal: controller.signal });
  } catch (cause) {
    if (opts.signal.aborted) throw cause;
    const reason = timedOut ? `no answer within ${opts.timeoutMs} ms` : (cause as Error).message;
    throw new ProviderError(`cannot reach ${provider} at ${url}: ${reason}`, { retryable: true, cause });
  } finally {
    // The abort link stays: aborting the run must also cancel the body being streamed.
    clearTimeout(timer);
  }
}
