import { randomUUID } from "node:crypto";
import { type Bus, callRpc, type Subjects } from "@gw/bus";
import { RPC, SEND_MAX_TEXT } from "@gw/contracts";
import { z } from "zod";
import { defineTool } from "./tool-registry.js";

export interface MessageSendDeps {
  bus: Bus;
  subjects: Subjects;
  /** delivery.sendTimeoutMs plus the bus hop. */
  timeoutMs: number;
}

const MessageSendInput = z.object({
  message: z.string().trim().min(1, "message must not be empty").max(SEND_MAX_TEXT),
  to: z.string().trim().min(1).max(256).optional(),
  channel: z.string().min(1).max(64).optional(),
  mediaUrl: z.string().max(2_048).refine((value) => /^https?:\/\//i.test(value), "must be an http(s) URL").optional(),
  threadId: z.string().min(1).max(128).optional(),
});

/**
 * `message.send`: the agent sends a message to a person through the delivery service, like a
 * client's `send`. Without `to` and `channel` it answers in the conversation it runs in (a
 * session `telegram:12345` sends to 12345 on telegram). Its idempotency key is the run and
 * tool call, so a replayed call is delivered once.
 */
export function messageSendTool(deps: MessageSendDeps) {
  return defineTool({
    name: "message.send",
    description:
      "Send a text message (and optionally one image or file by URL) to a person through a messaging channel. " +
      "Without `to` it replies in the current conversation's chat; `channel` picks a configured channel id.",
    input: MessageSendInput,
    run: async (p, ctx) => {
      ctx.signal.throwIfAborted();
      const idempotencyKey =
        ctx.runId !== undefined && ctx.toolCallId !== undefined ? `tool:${ctx.runId}:${ctx.toolCallId}` : `tool:${randomUUID()}`;
      const receipt = await callRpc(
        deps.bus,
        deps.subjects,
        RPC.deliverySend,
        {
          channel: p.channel,
          to: p.to ?? "",
          text: p.message,
          mediaUrls: p.mediaUrl === undefined ? [] : [p.mediaUrl],
          gifPlayback: false,
          threadId: p.threadId,
          sessionKey: ctx.sessionKey,
          idempotencyKey,
        },
        { timeoutMs: deps.timeoutMs },
      );
      const result = {
        sent: true,
        channel: receipt.channel,
        to: receipt.to,
        messageId: receipt.messageId,
        messageIds: receipt.messageIds,
      };
      return { content: JSON.stringify(result), ...result };
    },
  });
}
