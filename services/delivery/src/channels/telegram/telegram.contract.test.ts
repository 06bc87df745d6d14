import { describeChannelContract } from "@gw/channels/contract";
import { DEFAULT_TELEGRAM_BOTS, startFakeMediaServer, startFakeTelegram, telegramUpdate, telegramWebhookRequest } from "@gw/testing";
import { rawRequest, testHttp } from "../contract-helpers.js";
import { telegramPlugin } from "./plugin.js";
import { TelegramSettingsSchema } from "./settings.js";

/** The secret_token given to setWebhook, and a person writing to the bot in a private chat. */
const HOOK_SECRET = "contract-hook-secret";
const PERSON = 4242;

describeChannelContract("telegram", async () => {
  const fake = await startFakeTelegram();
  const media = await startFakeMediaServer();
  const bots = DEFAULT_TELEGRAM_BOTS.slice(0, 2);
  const secrets = [...bots.map((bot) => bot.token), HOOK_SECRET];
  const http = testHttp({ secrets, mediaHosts: [new URL(media.baseUrl).hostname] });
  const adapter = (token: string, accountId: string, inbound: Record<string, string> = {}) =>
    telegramPlugin.create({
      channelId: "telegram",
      accountId,
      settings: TelegramSettingsSchema.parse({ botToken: token, apiBaseUrl: fake.baseUrl, ...inbound }),
      http: http.factory,
    });
  const update = (text: string, secret: string) => rawRequest(telegramWebhookRequest(telegramUpdate({ chatId: PERSON, text }), secret));
  const [one, two] = [bots[0]!, bots[1]!];
  const chat = "-1001234567890";
  return {
    fake,
    accounts: [
      { adapter: adapter(one.token, "alerts"), identity: one.token.split(":")[0]! },
      { adapter: adapter(two.token, "support"), identity: two.token.split(":")[0]! },
    ],
    recipient: { to: ` ${chat} `, chat },
    threadId: "77",
    inbound: {
      webhook: {
        adapter: adapter(bots[0]!.token, "hooked", { inbound: "webhook", webhookSecret: HOOK_SECRET }),
        request: (text) => update(text, HOOK_SECRET),
        forged: (text) => update(text, "not-the-secret"),
        malformed: () => rawRequest({ headers: { "x-telegram-bot-api-secret-token": HOOK_SECRET }, body: "{not json" }),
      },
      receiver: {
        adapter: adapter(bots[0]!.token, "polling", { inbound: "polling" }),
        write: (text) => void fake.userWrites({ chatId: PERSON, text }),
      },
      from: { chat: String(PERSON), sender: String(PERSON) },
    },
    invalidRecipients: ["", "not a chat", "@ab", "12ab", "-0", "@has space", "+15550001111"],
    media: {
      urls: [media.url("photo.png"), media.url("report.pdf")],
      bytes: [media.files["photo.png"]!.data, media.files["report.pdf"]!.data],
    },
    expectedTextRequest: (text) => ({ method: "POST", path: `/bot${one.token}/sendMessage`, body: { chat_id: chat, text } }),
    secrets,
    close: async () => {
      await http.close();
      await fake.close();
      await media.close();
    },
  };
});
