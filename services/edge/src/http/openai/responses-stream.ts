import type { RunRecord } from "@gw/contracts";
import type { FastifyReply } from "fastify";
import { writeSse } from "./sse.js";
import {
  finalStatus,
  functionCallItem,
  itemId,
  messageItem,
  outputText,
  type ResponseHead,
  responseObject,
} from "./response-object.js";

/**
 * Writes one response as the Responses API's typed event stream: `response.created`, the
 * output items as they form (`response.output_item.added`, text deltas, `….done`), and a last
 * `response.completed` / `response.incomplete`, or `error` and `response.failed`. Every event
 * names its type in an `event:` line and in `type`, and carries a `sequence_number`.
 */
export class ResponseStream {
  private seq = 0;
  private readonly output: unknown[] = [];
  private message: { id: string; index: number; text: string } | undefined;

  constructor(
    private readonly reply: FastifyReply,
    private readonly head: ResponseHead,
  ) {}

  private send(type: string, data: Record<string, unknown>): void {
    writeSse(this.reply, { type, sequence_number: this.seq++, ...data }, type);
  }

  start(): void {
    const response = responseObject(this.head, "in_progress", []);
    this.send("response.created", { response });
    this.send("response.in_progress", { response });
  }

  text(delta: string): void {
    if (this.message === undefined) {
      this.message = { id: itemId("msg"), index: this.output.length, text: "" };
      this.output.push(undefined);
      const at = { item_id: this.message.id, output_index: this.message.index };
      this.send("response.output_item.added", { output_index: at.output_index, item: messageItem(at.item_id, "", "in_progress") });
      this.send("response.content_part.added", { ...at, content_index: 0, part: outputText("") });
    }
    this.message.text += delta;
    this.send("response.output_text.delta", {
      item_id: this.message.id,
      output_index: this.message.index,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  private closeMessage(): void {
    const m = this.message;
    if (m === undefined) return;
    const at = { item_id: m.id, output_index: m.index };
    this.send("response.output_text.done", { ...at, content_index: 0, text: m.text, logprobs: [] });
    this.send("response.content_part.done", { ...at, content_index: 0, part: outputText(m.text) });
    const item = messageItem(m.id, m.text, "completed");
    this.output[m.index] = item;
    this.send("response.output_item.done", { output_index: m.index, item });
  }

  /** The run ended well: close the text, add the client's tool calls, complete the response. */
  finish(record: RunRecord): ReturnType<typeof responseObject> {
    this.closeMessage();
    for (const call of record.toolCalls ?? []) {
      const id = itemId("fc");
      const output_index = this.output.length;
      this.output.push(functionCallItem(id, call, "completed"));
      this.send("response.output_item.added", { output_index, item: functionCallItem(id, call, "in_progress") });
      this.send("response.function_call_arguments.delta", { item_id: id, output_index, delta: call.arguments });
      this.send("response.function_call_arguments.done", { item_id: id, output_index, name: call.name, arguments: call.arguments });
      this.send("response.output_item.done", { output_index, item: this.output[output_index] });
    }
    if (this.output.length === 0) {
      // A run that said nothing still answers with an (empty) message, as non-streaming does.
      this.text("");
      this.closeMessage();
    }
    const status = finalStatus(record);
    const response = responseObject(this.head, status, this.output, { record });
    this.send(status === "incomplete" ? "response.incomplete" : "response.completed", { response });
    return response;
  }

  /** The run failed: the error as SDKs take it, then the failed response. */
  fail(error: { message: string; type: string }): void {
    this.send("error", { code: error.type, message: error.message, param: null });
    const failed = { code: "server_error", message: error.message };
    this.send("response.failed", { response: responseObject(this.head, "failed", this.output.filter(Boolean), { error: failed }) });
  }
}
