import type { ServerResponse } from "node:http";
import type { FakeConversation, FakeTurn } from "./fake-model-script.js";

interface OpenAiBody {
  model: string;
  messages: Array<{ role: string; content: unknown; tool_call_id?: string }>;
  max_tokens?: number;
  max_completion_tokens?: number;
  stream_options?: { include_usage?: boolean };
}

/** The usage the fake reports for every answer (when the request asks for it). */
export const FAKE_USAGE = { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 };

/** What of the request shapes the stream: a token limit cuts the text (finish_reason length). */
export function openAiStreamOptions(body: OpenAiBody): { maxChunks?: number; usage: boolean } {
  const max = body.max_completion_tokens ?? body.max_tokens;
  return { ...(typeof max === "number" ? { maxChunks: max } : {}), usage: body.stream_options?.include_usage === true };
}

/** A message's text: the string, or its text parts joined (a user turn with images is a list of parts). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { type?: unknown; text?: unknown }) => (part.type === "text" && typeof part.text === "string" ? part.text : "")).join("");
}

export function openAiConversation(body: OpenAiBody): Omit<FakeConversation, "attempt"> {
  const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
  return {
    lastUser: textOf(lastUser?.content),
    toolResults: body.messages.filter((m) => m.role === "tool").map((m) => String(m.content)),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Writes one streamed chat.completion.chunk sequence exactly as OpenAI does, ending with [DONE]:
 * a text answer is cut after `maxChunks` chunks (finish_reason `length`), and the usage chunk
 * comes only when the request asked for it (`stream_options.include_usage`).
 */
export async function writeOpenAiStream(
  res: ServerResponse,
  model: string,
  turn: FakeTurn,
  opts: { maxChunks?: number; usage: boolean } = { usage: true },
): Promise<void> {
  const id = "chatcmpl-fake";
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, choices, ...extra })}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream" });
  send([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
  if (turn.kind === "hang") return;
  if (turn.kind === "drop") {
    send([{ index: 0, delta: { content: turn.chunk }, finish_reason: null }]);
    await sleep(20);
    res.socket?.destroy();
    return;
  }
  if (turn.kind === "tools") {
    turn.calls.forEach((call, index) => {
      send([{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }, finish_reason: null }]);
      const args = JSON.stringify(call.arguments);
      const half = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, half), args.slice(half)])
        send([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: part } }] }, finish_reason: null }]);
    });
    send([{ index: 0, delta: {}, finish_reason: "tool_calls" }]);
  } else if (turn.kind === "text") {
    const chunks = turn.chunks.slice(0, opts.maxChunks);
    for (const chunk of chunks) {
      if (turn.delayMs) await sleep(turn.delayMs);
      if (res.destroyed) return;
      send([{ index: 0, delta: { content: chunk }, finish_reason: null }]);
    }
    send([{ index: 0, delta: {}, finish_reason: chunks.length < turn.chunks.length ? "length" : "stop" }]);
  }
  if (opts.usage) send([], { usage: FAKE_USAGE });
  res.end("data: [DONE]\n\n");
}
