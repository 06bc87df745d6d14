import type { InboundMessage } from "@gw/channels";
import type { InboundOrigin } from "./sink.js";

/**
 * The session a message belongs to (SPEC §2: `<channelId>:<identifier>`): the chat it was
 * written in, so a direct chat is the person's session and a group is one shared session.
 * A thread or forum topic is a conversation of its own: `:thread:<id>` follows the chat. A
 * channel's accounts other than its default one (a second bot) keep their own sessions with
 * the same people: `:account:<id>` follows the chat.
 */
export function sessionKeyOf(origin: InboundOrigin, msg: Pick<InboundMessage, "chat" | "threadId">, defaultAccountId: string): string {
  let key = `${origin.channelId}:${msg.chat}`;
  if (origin.accountId !== defaultAccountId) key += `:account:${origin.accountId}`;
  if (msg.threadId !== undefined && msg.threadId !== "") key += `:thread:${msg.threadId}`;
  return key;
}

/**
 * One event of one account, everywhere it is named: the dedupe key, the run's id (so a replay
 * finds the run instead of starting another) and the answer's idempotency key (so a replay
 * never sends it twice).
 */
export function eventKeyOf(origin: InboundOrigin, eventId: string): string {
  return `in:${origin.channelId}:${origin.accountId}:${eventId}`;
}

/**
 * What the agent reads: the text, with the sender's name in front in groups (several people
 * share the session there), and attachment URLs after it (runs carry text only).
 */
export function turnText(msg: InboundMessage): string {
  const lines: string[] = [];
  const text = msg.text.trim();
  if (text !== "") lines.push(msg.chatType === "group" ? `${msg.senderName ?? msg.sender}: ${text}` : text);
  for (const url of msg.mediaUrls ?? []) lines.push(`[attachment] ${url}`);
  return lines.join("\n");
}
