import { randomBytes } from "node:crypto";
import type { ClientToolCall, RunRecord } from "@gw/contracts";
import type { ResponsesBody } from "./responses-body.js";

/** Item ids as OpenAI spells them: a prefix and random hex. */
export function itemId(prefix: "resp" | "msg" | "fc"): string {
  return `${prefix}_${randomBytes(16).toString("hex")}`;
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface ResponseHead {
  id: string;
  createdAt: number;
  body: ResponsesBody;
  /** Kept for GET and previous_response_id (store: true, or a stored conversation continued). */
  stored?: boolean;
}

export function messageItem(id: string, text: string, status: "in_progress" | "completed") {
  return {
    type: "message" as const,
    id,
    status,
    role: "assistant" as const,
    content: status === "completed" ? [outputText(text)] : [],
  };
}

export function outputText(text: string) {
  return { type: "output_text" as const, text, annotations: [] as unknown[] };
}

export function functionCallItem(id: string, call: ClientToolCall, status: "in_progress" | "completed") {
  return {
    type: "function_call" as const,
    id,
    call_id: call.id,
    name: call.name,
    arguments: status === "completed" ? call.arguments : "",
    status,
  };
}

export function responseUsage(record: RunRecord | undefined) {
  const usage = record?.usage ?? { inputTokens: 0, outputTokens: 0 };
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** How a finished run ends a response: `length` is incomplete, as a max_output_tokens cut is. */
export function finalStatus(record: RunRecord): ResponseStatus {
  return record.finishReason === "length" ? "incomplete" : "completed";
}

/** The response object (OpenAI Responses API), echoing the request's settings. */
export function responseObject(
  head: ResponseHead,
  status: ResponseStatus,
  output: unknown[],
  extra: { record?: RunRecord; error?: { code: string; message: string } } = {},
) {
  const b = head.body;
  return {
    id: head.id,
    object: "response",
    created_at: head.createdAt,
    status,
    error: extra.error ?? null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    model: b.model,
    output,
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null,
    reasoning: { effort: b.reasoning?.effort ?? null, summary: null },
    service_tier: "default",
    store: head.stored === true,
    temperature: b.temperature ?? null,
    text: { format: b.text?.format ?? { type: "text" } },
    tool_choice: b.tool_choice ?? "auto",
    tools: b.tools ?? [],
    top_p: b.top_p ?? null,
    truncation: "disabled",
    usage: status === "in_progress" ? null : responseUsage(extra.record),
    user: b.user ?? null,
    metadata: b.metadata ?? {},
    ...(b.prompt_cache_key === undefined ? {} : { prompt_cache_key: b.prompt_cache_key }),
    ...(b.safety_identifier === undefined ? {} : { safety_identifier: b.safety_identifier }),
  };
}

/** The output items of a finished run: its text as a message, then the client's tool calls. */
export function outputItems(record: RunRecord): unknown[] {
  const text = record.payloads?.[0]?.text ?? "";
  const calls = record.toolCalls ?? [];
  const items: unknown[] = text !== "" || calls.length === 0 ? [messageItem(itemId("msg"), text, "completed")] : [];
  for (const call of calls) items.push(functionCallItem(itemId("fc"), call, "completed"));
  return items;
}
