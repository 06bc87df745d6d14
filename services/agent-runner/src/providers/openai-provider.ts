import { type HttpClient, readSse } from "@gw/http-client";
import {
  type ChatMessage,
  type ModelChunk,
  type ModelProvider,
  type ModelRequest,
  ProviderError,
  type Sampling,
  type StopReason,
  type ToolCall,
  type ToolChoice,
} from "./model-provider.js";
import { decoratedStream, openStream } from "./decorated-stream.js";
import { asProviderError, type HttpProviderConfig, parseStreamEvent, providerClient } from "./provider-http.js";
import { openAiReasoningEffort } from "./thinking.js";

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

/** A user turn: plain text, or content parts with its images as `image_url` (a URL, or a data: URL of the bytes). */
function userContent(m: Extract<ChatMessage, { role: "user" }>): unknown {
  if (!m.images?.length) return m.content;
  const images = m.images.map((image) => ({
    type: "image_url",
    image_url: { url: "data" in image ? `data:${image.mimeType};base64,${image.data}` : image.url },
  }));
  return m.content === "" ? images : [{ type: "text", text: m.content }, ...images];
}

function toWireMessages(system: string, messages: ChatMessage[]): unknown[] {
  const out: unknown[] = system ? [{ role: "system", content: system }] : [];
  for (const m of messages) {
    if (m.role === "user") out.push({ role: "user", content: userContent(m) });
    else if (m.role === "tool") out.push({ role: "tool", tool_call_id: m.toolCallId, content: m.content });
    else
      out.push({
        role: "assistant",
        content: m.content || null,
        ...(m.toolCalls?.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: JSON.stringify(c.input) },
              })),
            }
          : {}),
      });
  }
  return out;
}

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

const STOP_REASONS: Record<string, StopReason> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
};

/** The pass-through parameters under their chat-completions names; unset ones are left out. */
export function openAiSampling(s: Sampling | undefined, hasTools: boolean): Record<string, unknown> {
  if (s === undefined) return {};
  const out: Record<string, unknown> = {
    temperature: s.temperature,
    top_p: s.topP,
    // `max_tokens` rather than `max_completion_tokens`: every OpenAI-compatible server knows it.
    max_tokens: s.maxTokens,
    stop: s.stop?.length ? s.stop : undefined,
    seed: s.seed,
    presence_penalty: s.presencePenalty,
    frequency_penalty: s.frequencyPenalty,
    response_format: s.responseFormat,
    user: s.user,
    // The API refuses parallel_tool_calls on a request without tools.
    parallel_tool_calls: hasTools ? s.parallelToolCalls : undefined,
    prompt_cache_key: s.promptCacheKey,
    safety_identifier: s.safetyIdentifier,
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

function openAiToolChoice(choice: ToolChoice | undefined): { tool_choice?: unknown } {
  if (choice === undefined || choice.mode === "auto") return {};
  if (choice.mode === "required") return { tool_choice: "required" };
  return { tool_choice: { type: "function", function: { name: choice.name } } };
}

/** Any OpenAI-compatible `POST {baseUrl}/chat/completions` server, streamed. */
export class OpenAiProvider implements ModelProvider {
  private readonly http: HttpClient;

  constructor(private readonly config: HttpProviderConfig) {
    this.http = providerClient(config, config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {});
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    // The reading generator's chunks pass one plain iterator, not a second generator (decorated-stream.ts).
    return decoratedStream({
      open: async () => openStream(this.readStream((await this.send(request, signal)).body, signal)),
      raise: asProviderError,
    });
  }

  private send(request: ModelRequest, signal: AbortSignal) {
    const body = {
      model: request.model,
      messages: toWireMessages(request.system, request.messages),
      stream: true,
      stream_options: { include_usage: true },
      ...(request.tools.length
        ? {
            tools: request.tools.map((t) => ({
              type: "function",
              function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
          }
        : {}),
      ...(request.thinking ? { reasoning_effort: openAiReasoningEffort(request.thinking) } : {}),
      ...(request.tools.length ? openAiToolChoice(request.toolChoice) : {}),
      ...openAiSampling(request.sampling, request.tools.length > 0),
    };
    return this.http.request({
      method: "POST",
      path: "chat/completions",
      json: body,
      headers: { accept: "text/event-stream" },
      signal,
    });
  }

  private async *readStream(body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    const calls = new Map<number, { id: string; name: string; args: string }>();
    let finished = false;
    let stop: StopReason | undefined;
    for await (const event of readSse(body, { name: this.config.name, idleMs: this.config.timeoutMs, signal })) {
      if (event.data === "[DONE]") {
        finished = true;
        break;
      }
      const chunk = parseStreamEvent<ChunkJson>(event.data, this.config.name);
      if (chunk.error) throw new ProviderError(`${this.config.name}: ${chunk.error.message}`, { retryable: true });
      const choice = chunk.choices?.[0];
      if (choice?.finish_reason) stop = STOP_REASONS[choice.finish_reason] ?? "stop";
      if (choice?.delta?.reasoning_content) yield { type: "thinking" };
      if (choice?.delta?.content) yield { type: "text", text: choice.delta.content };
      for (const delta of choice?.delta?.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { id: "", name: "", args: "" };
        call.id ||= delta.id ?? "";
        call.name ||= delta.function?.name ?? "";
        call.args += delta.function?.arguments ?? "";
        calls.set(delta.index, call);
      }
      if (chunk.usage)
        yield {
          type: "usage",
          inputTokens: chunk.usage.prompt_tokens ?? 0,
          outputTokens: chunk.usage.completion_tokens ?? 0,
        };
    }
    if (!finished)
      throw new ProviderError(`${this.config.name} stream ended before [DONE]`, { retryable: true });
    for (const [index, call] of [...calls].sort(([a], [b]) => a - b)) {
      const toolCall: ToolCall = {
        id: call.id || `call_${index}`,
        name: call.name,
        input: parseArguments(call.args, call.name),
      };
      yield { type: "tool_call", call: toolCall };
    }
    if (stop !== undefined) yield { type: "stop", reason: stop };
  }
}
