import { type HttpClient, readSseBatches } from "@gw/http-client";
import {
  type ChatMessage,
  type ModelChunk,
  type ModelProvider,
  type ModelRequest,
  type Sampling,
  type ToolChoice,
} from "./model-provider.js";
import { decoratedStream, openStream } from "./decorated-stream.js";
import { OpenAiStreamReader } from "./openai-stream.js";
import { asProviderError, type HttpProviderConfig, providerClient } from "./provider-http.js";
import { pulledStream } from "./pulled-stream.js";
import { openAiReasoningEffort } from "./thinking.js";

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

  /** The body's events, a network read at a time, into chunks: one plain iterator, no generator (pulled-stream.ts). */
  private readStream(body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncIterableIterator<ModelChunk> {
    const events = readSseBatches(body, { name: this.config.name, idleMs: this.config.timeoutMs, signal });
    const reader = new OpenAiStreamReader(this.config.name);
    return pulledStream(
      () => events.next().then((batch) => reader.read(batch)),
      () => events.close(),
    );
  }
}
