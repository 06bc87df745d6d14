import type { InboundAttachment, InboundMessage } from "@gw/channels";
import { attachmentKey } from "./inbound-media.js";
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

/** A message's attachments beyond this many are counted, not described. */
const MAX_DESCRIBED = 20;
/** Names, types and ids longer than this are cut (the platform wrote them, not the person). */
const MAX_FIELD = 200;

/**
 * What the agent reads: the text, then one line per attachment describing it, with the
 * sender's name in front in groups (several people share the session there). Images delivery
 * fetched for the run (`fetched`, by attachmentKey: inbound-media.ts) travel as images and are
 * not described; of other files the agent gets what the file is and where the platform keeps it.
 */
export function turnText(msg: InboundMessage, fetched: ReadonlySet<string> = new Set()): string {
  const lines: string[] = [];
  const text = msg.text.trim();
  if (text !== "") lines.push(text);
  const attachments = (msg.attachments ?? []).filter((_, i) => !fetched.has(attachmentKey(msg, i)));
  for (const attachment of attachments.slice(0, MAX_DESCRIBED)) lines.push(describeAttachment(attachment));
  if (attachments.length > MAX_DESCRIBED) lines.push(`[${attachments.length - MAX_DESCRIBED} more attachments]`);
  if (msg.chatType === "group") {
    const name = msg.senderName ?? msg.sender;
    if (lines.length > 0) lines[0] = `${name}: ${lines[0]}`;
    else if ((msg.attachments ?? []).length > 0) lines.push(`${name}:`);
  }
  return lines.join("\n");
}

/** `[attachment: image "cat.jpg", image/jpeg, 48.2 KB, id AgAD…, https://…]`: only what the platform said. */
export function describeAttachment(a: InboundAttachment): string {
  const parts = [clean(a.kind) || "file"];
  if (a.name !== undefined && a.name !== "") parts[0] += ` ${JSON.stringify(a.name.slice(0, MAX_FIELD))}`;
  if (a.mimeType !== undefined && clean(a.mimeType) !== "") parts.push(clean(a.mimeType));
  if (a.size !== undefined && Number.isFinite(a.size) && a.size >= 0) parts.push(formatBytes(a.size));
  if (a.id !== undefined && clean(a.id) !== "") parts.push(`id ${clean(a.id)}`);
  if (a.url !== undefined && /^https?:\/\/\S+$/.test(a.url)) parts.push(a.url);
  return `[attachment: ${parts.join(", ")}]`;
}

/** Platform-given tokens: no spaces, brackets or control characters, bounded. */
function clean(value: string): string {
  return value.replace(/[^\w.+/:;=@-]/g, "").slice(0, MAX_FIELD);
}

function formatBytes(size: number): string {
  if (size < 1024) return `${size} bytes`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / (1024 * 1024)).toFixed(1)} MB`;
}
