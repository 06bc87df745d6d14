import { describeChannelContract } from "@gw/channels/contract";
import { DEFAULT_DISCORD_BOTS, DEFAULT_DISCORD_CHANNELS, DEFAULT_MEDIA_FILES, startFakeDiscord, startFakeMediaServer } from "@gw/testing";
import { HttpClients } from "../../http-clients.js";
import { discordPlugin } from "./plugin.js";
import { DiscordSettingsSchema } from "./settings.js";

describeChannelContract("discord", async () => {
  const fake = await startFakeDiscord();
  const media = await startFakeMediaServer();
  const [one, two] = DEFAULT_DISCORD_BOTS;
  const [general, thread] = DEFAULT_DISCORD_CHANNELS;
  const secrets = [one!.token, two!.token];
  // What delivery's composition root does (every client scrubs every secret), plus a media
  // policy that lets the loopback media server through the SSRF guard.
  const clients = new HttpClients(secrets);
  const http: typeof clients.factory = (opts) => clients.factory({ ...opts, ssrf: { allowHosts: ["127.0.0.1"] } });
  const account = (botToken: string) =>
    discordPlugin.create({ channelId: "discord", accountId: botToken, settings: DiscordSettingsSchema.parse({ botToken, apiBaseUrl: fake.baseUrl }), http });
  return {
    fake,
    accounts: [
      { adapter: account(one!.token), identity: one!.id },
      { adapter: account(two!.token), identity: two!.id },
    ],
    recipient: { to: `channel:${general!.id}`, chat: general!.id },
    threadId: thread!.id,
    invalidRecipients: ["", "general", "channel:", "channel:abc", "user:12", "guild:1100000000000000001", "#general"],
    media: {
      urls: [media.url("photo.png"), media.url("report.pdf")],
      bytes: [DEFAULT_MEDIA_FILES["photo.png"]!.data, DEFAULT_MEDIA_FILES["report.pdf"]!.data],
    },
    expectedTextRequest: (text) => ({
      method: "POST",
      path: `/api/v10/channels/${general!.id}/messages`,
      body: { content: text, enforce_nonce: true },
    }),
    secrets,
    close: async () => {
      await clients.close();
      await fake.close();
      await media.close();
    },
  };
});
