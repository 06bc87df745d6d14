/**
 * The ModelProvider port: one streaming chat call. Adapters: openai (any
 * chat-completions server), anthropic (Messages API), builtin (offline echo).
 * Provider-neutral messages and chunks, so the agent loop never sees a wire format.
 */

import type { ImageAttachment } from "@gw/contracts";

export type Thinking = "low" | "medium" | "high" | "extended";

export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export type ChatMessage =
  /** `images`: what came with the text; only a model whose config lists image input gets any. */
  | { role: "user"; content: string; images?: ImageAttachment[] }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string; isError?: boolean };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the tool's input object. */
  parameters: Record<string, unknown>;
}

/** Which tool the model must call: auto (its choice), required (some tool), or one by name. */
export type ToolChoice = { mode: "auto" } | { mode: "required" } | { mode: "function"; name: string };

/**
 * Sampling parameters a client passed through (OpenAI names, camel-cased); unset ones keep the
 * provider's defaults. A provider that cannot honour one throws INVALID_REQUEST naming it.
 */
export interface Sampling {
  temperature?: number;
  topP?: number;
  /** Per model call. */
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** The OpenAI `response_format` object (`json_object`, `json_schema`). */
  responseFormat?: Record<string, unknown>;
  /** The end user, for the provider's abuse monitoring. */
  user?: string;
  parallelToolCalls?: boolean;
  /** OpenAI's prompt cache routing hint; other providers ignore it. */
  promptCacheKey?: string;
  /** OpenAI's stable end-user id for abuse detection; other providers ignore it. */
  safetyIdentifier?: string;
}

export interface ModelRequest {
  model: string;
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  thinking?: Thinking;
  /** Absent: auto. */
  toolChoice?: ToolChoice;
  sampling?: Sampling;
}

/** Why a model turn stopped, in OpenAI's terms. */
export type StopReason = "stop" | "length" | "tool_calls" | "content_filter";

export type ModelChunk =
  | { type: "text"; text: string }
  | { type: "thinking" }
  | { type: "tool_call"; call: ToolCall }
  | { type: "usage"; inputTokens: number; outputTokens: number }
  | { type: "stop"; reason: StopReason };

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
