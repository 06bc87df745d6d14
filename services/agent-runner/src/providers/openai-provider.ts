import {
  type ChatMessage,
  type ModelChunk,
  type ModelProvider,
  type ModelRequest,
  ProviderError,
  type ToolCall,
} from "./model-provider.js";
import { httpError, providerPost } from "./http-transport.js";
import { readSse } from "./sse.js";
import { openAiReasoningEffort } from "./thinking.js";

export interface HttpProviderConfig {
  name: string;
  baseUrl: string;
  apiKey?: string;
  /** Per attempt: waiting for the response headers, and the longest silence inside a stream. */
  timeoutMs: number;
}

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

function toWireMessages(system: string, messages: ChatMessage[]): unknown[] {
  const out: unknown[] = system ? [{ role: "system", content: system }] : [];
  for (const m of messages) {
    if (m.role === "user") out.push({ role: "user", content: m.content });
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

/** Any OpenAI-compatible `POST {baseUrl}/chat/completions` server, streamed. */
export class OpenAiProvider implements ModelProvider {
  constructor(private readonly config: HttpProviderConfig) {}

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    const { config } = this;
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
    };
    const res = await providerPost(
      config.name,
      `${config.baseUrl.replace(/\/$/, "")}/chat/completions`,
      {
        headers: {
          "content-type": "application/json",
          accept: "text/event-stream",
          ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
      },
      { signal, timeoutMs: config.timeoutMs },
    );
    if (!res.ok) throw await httpError(config.name, res);
    yield* this.readStream(res.body, signal);
  }

  private async *readStream(body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    const calls = new Map<number, { id: string; name: string; args: string }>();
    let finished = false;
    for await (const event of readSse(body, { provider: this.config.name, idleMs: this.config.timeoutMs, signal })) {
      if (event.data === "[DONE]") {
        finished = true;
        break;
      }
      const chunk = JSON.parse(event.data) as ChunkJson;
      if (chunk.error) throw new ProviderError(`${this.config.name}: ${chunk.error.message}`, { retryable: true });
      const choice = chunk.choices?.[0];
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
  }
}
