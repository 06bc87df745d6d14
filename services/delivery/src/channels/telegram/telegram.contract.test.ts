import { describeChannelContract } from "@gw/channels/contract";
import { DEFAULT_TELEGRAM_BOTS, startFakeMediaServer, startFakeTelegram } from "@gw/testing";
import { testHttp } from "../contract-helpers.js";
import { telegramPlugin } from "./plugin.js";
import { TelegramSettingsSchema } from "./settings.js";

describeChannelContract("telegram", async () => {
  const fake = await startFakeTelegram();
  const media = await startFakeMediaServer();
  const bots = DEFAULT_TELEGRAM_BOTS.slice(0, 2);
  const secrets = bots.map((bot) => bot.token);
  const http = testHttp({ secrets, mediaHosts: [new URL(media.baseUrl).hostname] });
  const adapter = (token: string, accountId: string) =>
    telegramPlugin.create({
      channelId: "telegram",
      accountId,
      settings: TelegramSettingsSchema.parse({ botToken: token, apiBaseUrl: fake.baseUrl }),
      http: http.factory,
    });
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
