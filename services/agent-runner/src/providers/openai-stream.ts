import type { SseEvent } from "@gw/http-client";
import { type ModelChunk, ProviderError, type StopReason, type ToolCall } from "./model-provider.js";
import { parseStreamEvent } from "./provider-http.js";
import type { Pulled } from "./pulled-stream.js";

interface ToolCallDelta {
  index: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface ChunkJson {
  choices?: Array<{
    delta?: { content?: string | null; reasoning_content?: string | null; tool_calls?: ToolCallDelta[] };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

const STOP_REASONS: Record<string, StopReason> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
};

function parseArguments(raw: string, name: string): Record<string, unknown> {
  if (raw.trim() === "") return {};
  try {
    const value = JSON.parse(raw) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  } catch {
    throw new ProviderError(`the model sent invalid JSON arguments for tool ${name}`, { retryable: false });
  }
}

/**
 * One streamed chat completion's events, read batch by batch into model chunks: text and
 * reasoning as they come, tool calls assembled from their deltas and given after `[DONE]`, with
 * the stop reason last. A stream that ends before `[DONE]` was cut short (retryable).
 */
export class OpenAiStreamReader {
  private readonly calls = new Map<number, { id: string; name: string; args: string }>();
  private stop: StopReason | undefined;

  constructor(private readonly provider: string) {}

  /** The chunks of one read's events (`undefined`: the stream ended). */
  read(events: SseEvent[] | undefined): Pulled<ModelChunk> {
    if (events === undefined) return { items: [], done: false, error: new ProviderError(`${this.provider} stream ended before [DONE]`, { retryable: true }) };
    const items: ModelChunk[] = [];
    try {
      for (const event of events) {
        if (event.data === "[DONE]") return { items: items.concat(this.ending()), done: true };
        this.event(parseStreamEvent<ChunkJson>(event.data, this.provider), items);
      }
    } catch (error) {
      return { items, done: false, error };
    }
    return { items, done: false };
  }

  private event(chunk: ChunkJson, out: ModelChunk[]): void {
    if (chunk.error) throw new ProviderError(`${this.provider}: ${chunk.error.message}`, { retryable: true });
    const choice = chunk.choices?.[0];
    if (choice?.finish_reason) this.stop = STOP_REASONS[choice.finish_reason] ?? "stop";
    if (choice?.delta?.reasoning_content) out.push({ type: "thinking" });
    if (choice?.delta?.content) out.push({ type: "text", text: choice.delta.content });
    for (const delta of choice?.delta?.tool_calls ?? []) {
      const call = this.calls.get(delta.index) ?? { id: "", name: "", args: "" };
      call.id ||= delta.id ?? "";
      call.name ||= delta.function?.name ?? "";
      call.args += delta.function?.arguments ?? "";
      this.calls.set(delta.index, call);
    }
    if (chunk.usage)
      out.push({ type: "usage", inputTokens: chunk.usage.prompt_tokens ?? 0, outputTokens: chunk.usage.completion_tokens ?? 0 });
  }

  /** After `[DONE]`: the assembled tool calls in index order, then the stop reason. */
  private ending(): ModelChunk[] {
    const out: ModelChunk[] = [];
    for (const [index, call] of [...this.calls].sort(([a], [b]) => a - b)) {
      const toolCall: ToolCall = { id: call.id || `call_${index}`, name: call.name, input: parseArguments(call.args, call.name) };
      out.push({ type: "tool_call", call: toolCall });
    }
    if (this.stop !== undefined) out.push({ type: "stop", reason: this.stop });
    return out;
  }
}
