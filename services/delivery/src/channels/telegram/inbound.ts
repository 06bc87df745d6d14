/**
 * Telegram's inbound side: webhook requests (setWebhook with `secret_token`: every request
 * carries it in `X-Telegram-Bot-Api-Secret-Token`) and the Update -> InboundMessage mapping a
 * long-polling receiver shares. https://core.telegram.org/bots/api#update
 */
import type { InboundEndpoint, InboundMessage, InboundResult, RawInbound } from "@gw/channels";
import { z } from "zod";
import { accepted, jsonBody, refused, sameSecret, WEBHOOK_PATH } from "../webhook-helpers.js";

const UserSchema = z.object({
  id: z.number().int(),
  is_bot: z.boolean(),
  first_name: z.string(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

const EntitySchema = z.object({
  type: z.string(),
  offset: z.number().int(),
  length: z.number().int(),
  user: UserSchema.optional(),
});

const MessageSchema = z.object({
  message_id: z.number().int(),
  from: UserSchema.optional(),
  chat: z.object({ id: z.number().int(), type: z.string(), title: z.string().optional() }),
  date: z.number().int(),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(EntitySchema).optional(),
  caption_entities: z.array(EntitySchema).optional(),
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
  reply_to_message: z.object({ from: UserSchema.optional() }).optional(),
});

export const UpdateSchema = z.object({
  update_id: z.number().int(),
  message: MessageSchema.optional(),
});
export type TelegramUpdate = z.output<typeof UpdateSchema>;

/** The bot as inbound messages need it: its id (in its token) and, once known, its @username. */
export interface TelegramBotIdentity {
  id: number;
  username?: string;
}

function nameOf(user: z.output<typeof UserSchema>): string {
  return [user.first_name, user.last_name].filter(Boolean).join(" ") || (user.username ?? String(user.id));
}

/**
 * One update as an InboundMessage, or undefined for what is not a person writing (edits,
 * channel posts, service messages, joins). A group message mentions the bot when an entity
 * names it (`@username`, a text mention of its id, a `/command@username`) or it replies to the
 * bot; the mention is taken out of the text. The event id is the update_id, unique per bot.
 */
export function toInboundMessage(update: TelegramUpdate, bot: TelegramBotIdentity): InboundMessage | undefined {
  const message = update.message;
  if (message === undefined || message.from === undefined || message.chat.type === "channel") return undefined;
  const raw = message.text ?? message.caption ?? "";
  const entities = message.text !== undefined ? (message.entities ?? []) : (message.caption_entities ?? []);
  const handle = bot.username === undefined ? undefined : `@${bot.username.toLowerCase()}`;
  let mentioned = message.reply_to_message?.from?.id === bot.id;
  const cuts: Array<[number, number]> = [];
  for (const entity of entities) {
    const text = raw.slice(entity.offset, entity.offset + entity.length).toLowerCase();
    const names =
      (entity.type === "mention" && text === handle) ||
      (entity.type === "text_mention" && entity.user?.id === bot.id) ||
      (entity.type === "bot_command" && handle !== undefined && text.endsWith(handle));
    if (!names) continue;
    mentioned = true;
    if (entity.type === "mention") cuts.push([entity.offset, entity.offset + entity.length]);
  }
  let text = raw;
  for (const [start, end] of cuts.sort((a, b) => b[0] - a[0])) text = text.slice(0, start) + text.slice(end);
  return {
    eventId: String(update.update_id),
    chat: String(message.chat.id),
    ...(message.is_topic_message && message.message_thread_id !== undefined ? { threadId: String(message.message_thread_id) } : {}),
    sender: String(message.from.id),
    senderName: nameOf(message.from),
    chatType: message.chat.type === "private" ? "direct" : "group",
    mentioned,
    fromBot: message.from.is_bot,
    text: text.replace(/\s{2,}/g, " ").trim(),
    sentAt: message.date * 1000,
  };
}

/**
 * The webhook endpoint of one bot (`inbound: "webhook"`, or `webhookSecret` set without an
 * `inbound` mode). Telegram sends the secret given to setWebhook in every request; a request
 * without it is refused with 401 and stores nothing. Telegram retries an update until it gets a
 * 2xx, so an update is answered 200 only once stored (delivery's webhook router).
 */
export class TelegramWebhook implements InboundEndpoint {
  constructor(
    private readonly secret: string,
    private readonly botId: number,
    /** The bot's identity; its username is fetched once (getMe) for mention detection. */
    private readonly identity: () => Promise<TelegramBotIdentity>,
  ) {}

  async handle(req: RawInbound): Promise<InboundResult> {
    if (req.path !== WEBHOOK_PATH) return refused(404, `no Telegram endpoint at ${req.path}`);
    if (req.method !== "POST") return refused(405, "Telegram webhooks are POST requests");
    if (!sameSecret(req.headers["x-telegram-bot-api-secret-token"], this.secret)) {
      return refused(401, "missing or wrong X-Telegram-Bot-Api-Secret-Token");
    }
    const update = UpdateSchema.safeParse(jsonBody(req));
    if (!update.success) return refused(400, "the body is not a Telegram Update");
    // Only a group message needs the bot's @username (mentions); a private chat needs no getMe.
    const inGroup = update.data.message !== undefined && update.data.message.chat.type !== "private";
    const message = toInboundMessage(update.data, inGroup ? await this.identity() : { id: this.botId });
    return accepted(message === undefined ? [] : [message]);
  }
}
