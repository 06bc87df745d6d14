/**
 * A MESSAGE_CREATE dispatch as an InboundMessage. A DM is answered as `user:<author>`; a server
 * message only when it addresses the bot (a mention, or a reply to the bot: Discord has no
 * setting to answer every message), as `channel:<id>`, with a thread's messages answered in
 * the thread (`channel:<parent>` + threadId, as `send` takes them). The bot's own messages,
 * which the gateway also dispatches, are dropped here.
 */
import type { InboundMessage } from "@gw/channels";
import { z } from "zod";
import { inboundAttachment } from "../../inbound-attachment.js";

const MessageCreateSchema = z.object({
  id: z.string(),
  channel_id: z.string(),
  guild_id: z.string().optional(),
  author: z.object({ id: z.string(), username: z.string(), global_name: z.string().nullish(), bot: z.boolean().optional() }),
  content: z.string().default(""),
  timestamp: z.string(),
  mentions: z.array(z.object({ id: z.string() })).default([]),
  referenced_message: z.object({ author: z.object({ id: z.string() }) }).nullish(),
  attachments: z
    .array(z.object({ id: z.string(), filename: z.string(), size: z.number().int().optional(), url: z.string(), content_type: z.string().optional() }))
    .default([]),
});
export type MessageCreate = z.output<typeof MessageCreateSchema>;

/** Where a server message's channel sits: a thread answers in its parent channel's thread. */
export interface ChannelPlace {
  parentId?: string;
}

/** The message, when it is one the bot should see (see above); undefined otherwise. */
export function relevantMessage(d: unknown, selfId: string): MessageCreate | undefined {
  const parsed = MessageCreateSchema.safeParse(d);
  if (!parsed.success || parsed.data.author.id === selfId) return undefined;
  const message = parsed.data;
  return message.guild_id === undefined || addressesBot(message, selfId) ? message : undefined;
}

export function addressesBot(message: MessageCreate, selfId: string): boolean {
  return message.mentions.some((m) => m.id === selfId) || message.referenced_message?.author.id === selfId;
}

export function inboundOf(message: MessageCreate, selfId: string, place: ChannelPlace): InboundMessage {
  const direct = message.guild_id === undefined;
  const sentAt = Date.parse(message.timestamp);
  const name = message.author.global_name ?? message.author.username;
  return {
    eventId: message.id,
    chat: direct ? `user:${message.author.id}` : `channel:${place.parentId ?? message.channel_id}`,
    ...(!direct && place.parentId !== undefined ? { threadId: message.channel_id } : {}),
    sender: message.author.id,
    senderName: name,
    chatType: direct ? "direct" : "group",
    mentioned: addressesBot(message, selfId),
    fromBot: message.author.bot === true,
    text: message.content.replace(new RegExp(`<@!?${selfId}>`, "g"), " ").replace(/ {2,}/g, " ").trim(),
    // Discord's CDN URLs are signed and expire in about a day; no token of ours is in them.
    ...(message.attachments.length > 0
      ? { attachments: message.attachments.map((a) => inboundAttachment({ name: a.filename, mimeType: a.content_type, size: a.size, url: a.url, id: a.id })) }
      : {}),
    sentAt: Number.isFinite(sentAt) ? sentAt : Date.now(),
  };
}
