import type { ServerResponse } from "node:http";
import type { FakeConversation, FakeTurn } from "./fake-model-script.js";

type Block = { type: string; text?: string; content?: unknown };
interface AnthropicBody {
  model: string;
  messages: Array<{ role: string; content: string | Block[] }>;
  max_tokens?: number;
}

/** A `max_tokens` below the answer's chunk count cuts it (stop_reason `max_tokens`). */
export function anthropicMaxChunks(body: AnthropicBody): number | undefined {
  return typeof body.max_tokens === "number" ? body.max_tokens : undefined;
}

export function anthropicConversation(body: AnthropicBody): Omit<FakeConversation, "attempt"> {
  const users = body.messages.filter(
    (m) => m.role === "user" && (typeof m.content === "string" || m.content.some((b) => b.type === "text")),
  );
  const last = users.at(-1);
  const lastUser =
    last === undefined ? "" : typeof last.content === "string" ? last.content : last.content.map((b) => b.text ?? "").join("");
  const toolResults = body.messages.flatMap((m) =>
    typeof m.content === "string" ? [] : m.content.filter((b) => b.type === "tool_result").map((b) => String(b.content)),
  );
  return { lastUser, toolResults };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes a Messages API event stream: message_start, content blocks, message_delta, message_stop. */
export async function writeAnthropicStream(res: ServerResponse, model: string, turn: FakeTurn, maxChunks?: number): Promise<void> {
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream" });
  send("message_start", {
    message: { id: "msg_fake", type: "message", role: "assistant", model, content: [], stop_reason: null, usage: { input_tokens: 9, output_tokens: 1 } },
  });
  if (turn.kind === "hang") return;
  send("ping", {});
  if (turn.kind === "drop") {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: turn.chunk } });
    await sleep(20);
    res.socket?.destroy();
    return;
  }
  let stop = "end_turn";
  if (turn.kind === "tools") {
    stop = "tool_use";
    turn.calls.forEach((call, index) => {
      send("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } });
      const json = JSON.stringify(call.arguments);
      const half = Math.ceil(json.length / 2);
      for (const part of [json.slice(0, half), json.slice(half)])
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } });
      send("content_block_stop", { index });
    });
  } else if (turn.kind === "text") {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    const chunks = turn.chunks.slice(0, maxChunks);
    for (const chunk of chunks) {
      if (turn.delayMs) await sleep(turn.delayMs);
      if (res.destroyed) return;
      send("content_block_delta", { index: 0, delta: { type: "text_delta", text: chunk } });
    }
    send("content_block_stop", { index: 0 });
    if (chunks.length < turn.chunks.length) stop = "max_tokens";
  }
  send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 15 } });
  send("message_stop", {});
  res.end();
}
