/**
 * A Telegram Update (https://core.telegram.org/bots/api#update) as an InboundMessage. Only
 * `message` updates carry what a person wrote to the bot; every other update (edits, channel
 * posts, member changes) maps to nothing, though its update_id still moves the cursor.
 */
import type { InboundMessage } from "@gw/channels";
import { z } from "zod";
import { telegramAttachments, TelegramFilesSchema } from "./inbound-attachments.js";

const UserSchema = z.object({
  id: z.number().int(),
  is_bot: z.boolean(),
  first_name: z.string(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

const EntitySchema = z.object({ type: z.string(), offset: z.number().int(), length: z.number().int(), user: UserSchema.optional() });

const MessageSchema = TelegramFilesSchema.extend({
  message_id: z.number().int(),
  from: UserSchema.optional(),
  /** Set when the message was sent on behalf of a chat (an anonymous admin, a channel): the real sender. */
  sender_chat: z.object({ id: z.number().int(), title: z.string().optional() }).optional(),
  chat: z.object({ id: z.number().int(), type: z.string() }),
  date: z.number(),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(EntitySchema).optional(),
  caption_entities: z.array(EntitySchema).optional(),
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
  reply_to_message: z.object({ from: UserSchema.optional() }).optional(),
});

export const UpdateSchema = z.object({ update_id: z.number().int(), message: z.unknown().optional() });
export type TelegramUpdate = z.output<typeof UpdateSchema>;

/** The bot itself, to tell a mention or a reply to it. */
export interface TelegramBotIdentity {
  id: number;
  username?: string;
}

type Entity = z.output<typeof EntitySchema>;

/** The message an update carries, or undefined (another kind of update, or a shape we cannot read). */
export function messageOfUpdate(update: TelegramUpdate, bot: TelegramBotIdentity): InboundMessage | undefined {
  const parsed = MessageSchema.safeParse(update.message);
  if (!parsed.success) return undefined;
  const message = parsed.data;
  // A channel's posts are broadcasts, not someone talking to the bot.
  if (message.chat.type === "channel") return undefined;
  const raw = message.text ?? message.caption ?? "";
  const entities = (message.text !== undefined ? message.entities : message.caption_entities) ?? [];
  const ours = entities.filter((entity) => addressesBot(raw, entity, bot));
  // On behalf of a chat, `from` is a placeholder bot (GroupAnonymousBot for an anonymous admin,
  // Channel_Bot for a channel), not who wrote: the chat is the sender, and no bot.
  const onBehalf = message.sender_chat;
  const sender = onBehalf?.id ?? message.from?.id ?? message.chat.id;
  const attachments = telegramAttachments(message);
  const person = message.from === undefined ? undefined : [message.from.first_name, message.from.last_name].filter(Boolean).join(" ");
  const name = onBehalf === undefined ? person : onBehalf.title;
  return {
    eventId: String(update.update_id),
    chat: String(message.chat.id),
    ...(message.is_topic_message === true && message.message_thread_id !== undefined ? { threadId: String(message.message_thread_id) } : {}),
    sender: String(sender),
    ...(name === undefined || name === "" ? {} : { senderName: name }),
    chatType: message.chat.type === "private" ? "direct" : "group",
    mentioned: ours.length > 0 || message.reply_to_message?.from?.id === bot.id,
    fromBot: onBehalf === undefined && (message.from?.is_bot ?? false),
    text: withoutMentions(raw, ours),
    ...(attachments.length > 0 ? { attachments } : {}),
    sentAt: message.date * 1000,
  };
}

/** `@botname`, a text mention of the bot, or a command addressed to it (`/help@botname`). */
function addressesBot(text: string, entity: Entity, bot: TelegramBotIdentity): boolean {
  if (entity.type === "text_mention") return entity.user?.id === bot.id;
  if (bot.username === undefined) return false;
  const piece = text.slice(entity.offset, entity.offset + entity.length).toLowerCase();
  const name = `@${bot.username.toLowerCase()}`;
  if (entity.type === "mention") return piece === name;
  if (entity.type === "bot_command") return piece.endsWith(name);
  return false;
}

/** The text without the `@botname` mentions (commands keep their name, minus the bot's). */
function withoutMentions(text: string, ours: readonly Entity[]): string {
  let out = text;
  // Right to left, so earlier offsets stay valid (they are UTF-16 units, as JavaScript counts).
  for (const entity of [...ours].sort((a, b) => b.offset - a.offset)) {
    const end = entity.offset + entity.length;
    if (entity.type === "mention") {
      const before = out.slice(0, entity.offset);
      const after = out.slice(end);
      out = before.endsWith(" ") && after.startsWith(" ") ? before + after.slice(1) : before + after;
    } else if (entity.type === "bot_command") out = out.slice(0, entity.offset) + out.slice(entity.offset, end).replace(/@[^@]*$/, "") + out.slice(end);
  }
  return out.trim();
}
