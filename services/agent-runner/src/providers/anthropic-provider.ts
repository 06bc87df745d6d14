import { GatewayError } from "@gw/contracts";
import { type HttpClient, readSse } from "@gw/http-client";
import {
  type ChatMessage,
  type ModelChunk,
  type ModelProvider,
  type ModelRequest,
  ProviderError,
  type Sampling,
  type StopReason,
  type ToolChoice,
} from "./model-provider.js";
import { decoratedStream, openStream } from "./decorated-stream.js";
import { asProviderError, type HttpProviderConfig, parseStreamEvent, providerClient } from "./provider-http.js";
import { anthropicThinkingBudget } from "./thinking.js";

const API_VERSION = "2023-06-01";
const MAX_TOKENS = 4_096;

type Block = Record<string, unknown>;

/** A user turn: plain text, or its images as image blocks (base64 or URL source) before the text. */
function userContent(m: Extract<ChatMessage, { role: "user" }>): Block[] | string {
  if (!m.images?.length) return m.content;
  const blocks: Block[] = m.images.map((image) => ({
    type: "image",
    source: "data" in image ? { type: "base64", media_type: image.mimeType, data: image.data } : { type: "url", url: image.url },
  }));
  return m.content === "" ? blocks : [...blocks, { type: "text", text: m.content }];
}

/** Tool results go back as user turns of tool_result blocks; consecutive ones share a turn. */
function toWireMessages(messages: ChatMessage[]): Array<{ role: string; content: Block[] | string }> {
  const out: Array<{ role: string; content: Block[] | string }> = [];
  for (const m of messages) {
    if (m.role === "user") out.push({ role: "user", content: userContent(m) });
    else if (m.role === "assistant") {
      const content: Block[] = m.content ? [{ type: "text", text: m.content }] : [];
      for (const c of m.toolCalls ?? []) content.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
      out.push({ role: "assistant", content });
    } else {
      const block = { type: "tool_result", tool_use_id: m.toolCallId, content: m.content, is_error: m.isError ?? false };
      const last = out.at(-1);
      if (last?.role === "user" && Array.isArray(last.content)) last.content.push(block);
      else out.push({ role: "user", content: [block] });
    }
  }
  return out;
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

/**
 * The pass-through parameters the Messages API has. Those it lacks (seed, the penalties, a JSON
 * response_format) are refused, naming the parameter, rather than dropped without a word.
 */
export function anthropicSampling(s: Sampling | undefined): Record<string, unknown> {
  if (s === undefined) return {};
  const unsupported = [
    ["seed", s.seed],
    ["presence_penalty", s.presencePenalty],
    ["frequency_penalty", s.frequencyPenalty],
    ["response_format", s.responseFormat?.type === "text" ? undefined : s.responseFormat],
  ].find(([, value]) => value !== undefined);
  if (unsupported)
    throw new GatewayError("INVALID_REQUEST", `${String(unsupported[0])} is not supported by this agent's model (Anthropic Messages API)`, {
      details: { param: unsupported[0] },
    });
  const out: Record<string, unknown> = {
    temperature: s.temperature,
    top_p: s.topP,
    stop_sequences: s.stop?.length ? s.stop : undefined,
    metadata: s.user ? { user_id: s.user } : undefined,
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

function anthropicToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): { tool_choice?: unknown } {
  const noParallel = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined || choice.mode === "auto")
    return parallel === false ? { tool_choice: { type: "auto", ...noParallel } } : {};
  if (choice.mode === "required") return { tool_choice: { type: "any", ...noParallel } };
  return { tool_choice: { type: "tool", name: choice.name, ...noParallel } };
}

interface StreamEvent {
  type: string;
  index?: number;
  content_block?: { type: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string };
  message?: { usage?: { input_tokens?: number } };
  usage?: { output_tokens?: number };
  error?: { type?: string; message?: string };
}

/** The Anthropic Messages API (`POST {baseUrl}/v1/messages`), streamed. */
export class AnthropicProvider implements ModelProvider {
  private readonly http: HttpClient;
  private readonly path: string;

  constructor(private readonly config: HttpProviderConfig) {
    this.http = providerClient(config, config.apiKey ? { "x-api-key": config.apiKey } : {});
    this.path = config.baseUrl.replace(/\/$/, "").endsWith("/v1") ? "messages" : "v1/messages";
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    // The reading generator's chunks pass one plain iterator, not a second generator (decorated-stream.ts).
    return decoratedStream({
      open: async () => openStream(this.readStream((await this.send(request, signal)).body, signal)),
      raise: asProviderError,
    });
  }

  private send(request: ModelRequest, signal: AbortSignal) {
    const budget = request.thinking ? anthropicThinkingBudget(request.thinking) : 0;
    const body = {
      model: request.model,
      // The thinking budget is spent out of max_tokens, so it comes on top of the answer's share.
      max_tokens: (request.sampling?.maxTokens ?? MAX_TOKENS) + budget,
      stream: true,
      messages: toWireMessages(request.messages),
      ...(request.system ? { system: request.system } : {}),
      ...(request.tools.length
        ? { tools: request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) }
        : {}),
      ...(budget ? { thinking: { type: "enabled", budget_tokens: budget } } : {}),
      ...(request.tools.length ? anthropicToolChoice(request.toolChoice, request.sampling?.parallelToolCalls) : {}),
      ...anthropicSampling(request.sampling),
    };
    return this.http.request({
      method: "POST",
      path: this.path,
      json: body,
      headers: { accept: "text/event-stream", "anthropic-version": API_VERSION },
      signal,
    });
  }

  private async *readStream(body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    const tools = new Map<number, { id: string; name: string; json: string }>();
    let inputTokens = 0;
    let stopped = false;
    for await (const sse of readSse(body, { name: this.config.name, idleMs: this.config.timeoutMs, signal })) {
      const event = parseStreamEvent<StreamEvent>(sse.data, this.config.name);
      switch (event.type) {
        case "message_start":
          inputTokens = event.message?.usage?.input_tokens ?? 0;
          break;
        case "content_block_start":
          if (event.content_block?.type === "tool_use")
            tools.set(event.index ?? 0, { id: event.content_block.id ?? "", name: event.content_block.name ?? "", json: "" });
          else if (event.content_block?.type === "thinking") yield { type: "thinking" };
          break;
        case "content_block_delta":
          if (event.delta?.type === "text_delta" && event.delta.text) yield { type: "text", text: event.delta.text };
          else if (event.delta?.type === "input_json_delta") {
            const tool = tools.get(event.index ?? 0);
            if (tool) tool.json += event.delta.partial_json ?? "";
          }
          break;
        case "content_block_stop": {
          const tool = tools.get(event.index ?? 0);
          if (tool) {
            tools.delete(event.index ?? 0);
            yield { type: "tool_call", call: { id: tool.id, name: tool.name, input: parseInput(tool.json, tool.name) } };
          }
          break;
        }
        case "message_delta":
          yield { type: "usage", inputTokens, outputTokens: event.usage?.output_tokens ?? 0 };
          if (event.delta?.stop_reason) yield { type: "stop", reason: STOP_REASONS[event.delta.stop_reason] ?? "stop" };
          break;
        case "message_stop":
          stopped = true;
          break;
        case "error":
          throw new ProviderError(`${this.config.name}: ${event.error?.message ?? "stream error"}`, {
            retryable: event.error?.type === "overloaded_error" || event.error?.type === "api_error",
          });
      }
      if (stopped) break;
    }
    if (!stopped) throw new ProviderError(`${this.config.name} stream ended before message_stop`, { retryable: true });
  }
}

function parseInput(json: string, name: string): Record<string, unknown> {
  if (json.trim() === "") return {};
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new ProviderError(`the model sent invalid JSON input for tool ${name}`, { retryable: false });
  }
}
