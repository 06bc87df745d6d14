/**
 * Telegram updates as the Bot API delivers them (https://core.telegram.org/bots/api#update), to
 * post to a bot's webhook the way Telegram does: JSON, with the `secret_token` given to
 * setWebhook in `X-Telegram-Bot-Api-Secret-Token`. Mentions (`@name`) and commands (`/cmd`)
 * in the text get their entities, as Telegram adds them.
 */

export interface TelegramUpdateInput {
  /** Default: the next of a counter, as update ids grow per bot. */
  updateId?: number;
  chatId: number;
  chatType?: "private" | "group" | "supergroup";
  from?: { id: number; firstName?: string; username?: string; isBot?: boolean };
  /**
   * Sent on behalf of a chat (`sender_chat`): an anonymous group admin names the group itself.
   * `from` is then Telegram's placeholder GroupAnonymousBot unless given.
   */
  senderChat?: { id: number; title: string; type?: "group" | "supergroup" | "channel" };
  text: string;
  /** A forum topic (`message_thread_id` with `is_topic_message`). */
  topicId?: number;
  /** The message replies to one the bot (this user id) wrote. */
  replyToUserId?: number;
  /** Unix seconds; default now. */
  date?: number;
  /**
   * Files the message carries, as the Bot API names them (`photo`: PhotoSize array, `document`,
   * `voice`...); the text then goes in `caption`, as Telegram sends it with media.
   */
  files?: Record<string, unknown>;
}

let nextUpdateId = 700_000_000 + Math.floor(Math.random() * 1_000_000);
let nextMessageId = 1;

function entities(text: string): Array<{ type: string; offset: number; length: number }> {
  const found: Array<{ type: string; offset: number; length: number }> = [];
  for (const match of text.matchAll(/(^|\s)(@[A-Za-z][A-Za-z0-9_]{3,31}|\/[a-z_]+(?:@[A-Za-z0-9_]+)?)/g)) {
    const token = match[2]!;
    found.push({ type: token.startsWith("@") ? "mention" : "bot_command", offset: match.index + match[1]!.length, length: token.length });
  }
  return found;
}

/** The placeholder `from` of a message an anonymous group admin sent. */
export const GROUP_ANONYMOUS_BOT = { id: 1087968824, firstName: "Group", username: "GroupAnonymousBot", isBot: true } as const;

export function telegramUpdate(input: TelegramUpdateInput): Record<string, unknown> {
  const from = input.from ?? (input.senderChat === undefined ? { id: input.chatId, firstName: "Ada" } : GROUP_ANONYMOUS_BOT);
  const chatType = input.chatType ?? (input.chatId > 0 ? "private" : "supergroup");
  const found = entities(input.text);
  return {
    update_id: input.updateId ?? nextUpdateId++,
    message: {
      message_id: nextMessageId++,
      from: { id: from.id, is_bot: from.isBot ?? false, first_name: from.firstName ?? "Ada", ...(from.username ? { username: from.username } : {}) },
      ...(input.senderChat === undefined
        ? {}
        : { sender_chat: { id: input.senderChat.id, title: input.senderChat.title, type: input.senderChat.type ?? (input.senderChat.id === input.chatId ? chatType : "channel") } }),
      chat: chatType === "private" ? { id: input.chatId, type: "private", first_name: from.firstName ?? "Ada" } : { id: input.chatId, type: chatType, title: "A group" },
      date: input.date ?? Math.floor(Date.now() / 1000),
      ...(input.files === undefined
        ? { text: input.text, ...(found.length > 0 ? { entities: found } : {}) }
        : { ...input.files, ...(input.text === "" ? {} : { caption: input.text }), ...(found.length > 0 ? { caption_entities: found } : {}) }),
      ...(input.topicId === undefined ? {} : { message_thread_id: input.topicId, is_topic_message: true }),
      ...(input.replyToUserId === undefined
        ? {}
        : { reply_to_message: { message_id: 1, from: { id: input.replyToUserId, is_bot: true, first_name: "bot" }, chat: { id: input.chatId, type: chatType }, date: 0 } }),
    },
  };
}

/** The request Telegram makes to a webhook set with `secret_token`. */
export function telegramWebhookRequest(update: Record<string, unknown>, secretToken: string | undefined): { headers: Record<string, string>; body: string } {
  return {
    headers: { "content-type": "application/json", ...(secretToken === undefined ? {} : { "x-telegram-bot-api-secret-token": secretToken }) },
    body: JSON.stringify(update),
  };
}
