import { fromRunAttachment, GatewayError, type ImageAttachment, type RunAttachment, type RunHistoryMessage, type RunToolCall } from "@gw/contracts";
import type { ChatMessage, ToolCall } from "../providers/model-provider.js";

/** What a model reads for a call nobody answered, so the conversation stays well formed. */
export const UNANSWERED_CALL = "error: the client sent no result for this tool call";

/**
 * OpenAI and Anthropic refuse a conversation in which an assistant's tool call has no result
 * right after it, or a tool result answers no call of the assistant turn right before it. A
 * client may leave its tool calls unanswered (it asks something else instead): this puts a
 * result saying so after the tool results that did come. A result whose call is gone (a history
 * cut inside a tool exchange, stored before compaction and the history limit kept exchanges
 * whole) is left out. The stored conversation stays as it was.
 */
export function pairToolTurns(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "tool") continue;
    out.push(message);
    if (message.role !== "assistant" || !message.toolCalls?.length) continue;
    const open = new Map(message.toolCalls.map((call) => [call.id, call]));
    while (messages[i + 1]?.role === "tool") {
      const result = messages[++i] as Extract<ChatMessage, { role: "tool" }>;
      // A second result for one call, or one for a call of another turn, would be refused too.
      if (open.delete(result.toolCallId)) out.push(result);
    }
    for (const call of open.values())
      out.push({ role: "tool", toolCallId: call.id, name: call.name, content: UNANSWERED_CALL, isError: true });
  }
  return out;
}

/** The tool calls of the conversation's last assistant turn that no tool result follows yet. */
export function pendingCalls(messages: ChatMessage[]): ToolCall[] {
  let end = messages.length;
  while (end > 0 && messages[end - 1]!.role === "tool") end--;
  const last = messages[end - 1];
  if (last?.role !== "assistant" || !last.toolCalls?.length) return [];
  const answered = new Set(messages.slice(end).map((m) => (m.role === "tool" ? m.toolCallId : "")));
  return last.toolCalls.filter((call) => !answered.has(call.id));
}

function toolCall(call: RunToolCall): ToolCall {
  let input: unknown;
  try {
    input = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch {
    input = undefined;
  }
  if (input === null || typeof input !== "object" || Array.isArray(input))
    throw new GatewayError("INVALID_REQUEST", `the arguments of tool call ${call.id} are not a JSON object`);
  return { id: call.id, name: call.name, input: input as Record<string, unknown> };
}

/** Images that travelled with the run, as the agent loop reads them. */
export function runImages(attachments: readonly RunAttachment[] | undefined): ImageAttachment[] {
  return (attachments ?? []).map(fromRunAttachment).filter((image) => image !== undefined);
}

/** A user turn, with its images when it has any. */
export function userMessage(content: string, images: ImageAttachment[]): ChatMessage {
  return images.length ? { role: "user", content, images } : { role: "user", content };
}

/** A message that travelled with the run, as the agent loop's message. */
export function fromRunMessage(m: RunHistoryMessage): ChatMessage {
  if (m.role === "assistant")
    return { role: "assistant", content: m.content, ...(m.toolCalls.length ? { toolCalls: m.toolCalls.map(toolCall) } : {}) };
  if (m.role === "tool") return { role: "tool", toolCallId: m.toolCallId, name: m.name, content: m.content };
  return userMessage(m.content, runImages(m.attachments));
}

/**
 * The turn a run continues with when the client answers tool calls: its results only, when the
 * conversation already ends with those calls unanswered (a session the runs kept); else the
 * assistant turn that made them first (a stateless request, or a session that moved on).
 */
export function toolResultTurn(history: ChatMessage[], callTurn: RunHistoryMessage | undefined, results: RunHistoryMessage[]): ChatMessage[] {
  const answers = results.map(fromRunMessage);
  const pending = new Set(pendingCalls(history).map((c) => c.id));
  if (results.every((r) => pending.has(r.toolCallId))) return answers;
  if (callTurn === undefined || callTurn.role !== "assistant")
    throw new GatewayError("INVALID_REQUEST", "tool results must follow the assistant message with their tool calls");
  const assistant = fromRunMessage(callTurn);
  const calls = new Set(assistant.role === "assistant" ? (assistant.toolCalls ?? []).map((c) => c.id) : []);
  const stray = results.find((r) => !calls.has(r.toolCallId));
  if (stray) throw new GatewayError("INVALID_REQUEST", `no tool call ${stray.toolCallId} for this tool result`);
  return [assistant, ...answers];
}
