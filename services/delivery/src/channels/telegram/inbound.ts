/**
 * Telegram's webhook requests (setWebhook with `secret_token`: every request carries it in
 * `X-Telegram-Bot-Api-Secret-Token`). The Update -> InboundMessage mapping is the one the
 * long-polling receiver uses (update-message.ts). https://core.telegram.org/bots/api#update
 */
import type { InboundEndpoint, InboundResult, RawInbound } from "@gw/channels";
import { accepted, jsonBody, refused, sameSecret, WEBHOOK_PATH } from "../webhook-helpers.js";
import { messageOfUpdate, type TelegramBotIdentity, UpdateSchema } from "./update-message.js";

export type { TelegramBotIdentity };

/**
 * The webhook endpoint of one bot (`inbound: "webhook"`, or `webhookSecret` set without an
 * `inbound` mode). Telegram sends the secret given to setWebhook in every request; a request
 * without it is refused with 401 and stores nothing. Telegram retries an update until it gets a
 * 2xx, so an update is answered 200 only once stored (delivery's webhook router), and a group
 * message while the bot's @username is unknown gets 503.
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
    const chatType = (update.data.message as { chat?: { type?: unknown } } | undefined)?.chat?.type;
    const inGroup = chatType === "group" || chatType === "supergroup";
    const bot = inGroup ? await this.identity() : { id: this.botId };
    // Without it `@bot hello` would read as no mention and be dropped for good; a non-2xx makes
    // Telegram send the update again, by when getMe may answer.
    if (inGroup && bot.username === undefined) return refused(503, "the bot's @username is not known (getMe failed), so a group mention cannot be told yet");
    const message = messageOfUpdate(update.data, bot);
    return accepted(message === undefined ? [] : [message]);
  }
}
