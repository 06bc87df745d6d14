import { describeChannelContract } from "@gw/channels/contract";
import {
  DEFAULT_DISCORD_BOTS,
  DEFAULT_DISCORD_CHANNELS,
  DEFAULT_DISCORD_USERS,
  DEFAULT_MEDIA_FILES,
  startFakeDiscord,
  startFakeDiscordGateway,
  startFakeMediaServer,
  waitUntil,
} from "@gw/testing";
import { HttpClients } from "../../http-clients.js";
import { discordPlugin } from "./plugin.js";
import { DiscordSettingsSchema } from "./settings.js";

describeChannelContract("discord", async () => {
  const fake = await startFakeDiscord();
  const gateway = await startFakeDiscordGateway({ bots: DEFAULT_DISCORD_BOTS, heartbeatIntervalMs: 200 });
  const [person] = DEFAULT_DISCORD_USERS;
  const media = await startFakeMediaServer();
  const [one, two] = DEFAULT_DISCORD_BOTS;
  const [general, thread] = DEFAULT_DISCORD_CHANNELS;
  const secrets = [one!.token, two!.token];
  // What delivery's composition root does (every client scrubs every secret), plus a media
  // policy that lets the loopback media server through the SSRF guard.
  const clients = new HttpClients(secrets);
  const http: typeof clients.factory = (opts) => clients.factory({ ...opts, ssrf: { allowHosts: ["127.0.0.1"] } });
  const account = (botToken: string, inbound = "off") =>
    discordPlugin.create({
      channelId: "discord",
      accountId: botToken,
      settings: DiscordSettingsSchema.parse({ botToken, apiBaseUrl: fake.baseUrl, gatewayUrl: gateway.url, inbound }),
      http,
    });
  // A DM from a person, over the Gateway to the first bot.
  const sessionsMade = () => gateway.stats.identifies + gateway.stats.resumed;
  const dm = async (text: string) => {
    // Once the receiver that is starting has identified (or resumed), so its session gets the DM.
    const before = sessionsMade();
    await waitUntil(() => sessionsMade() > before, { what: "the receiver's Gateway session" });
    gateway.userWrites({ channelId: "1400000000000000001", author: { id: person!.id, username: person!.username }, content: text });
  };
  return {
    fake,
    accounts: [
      { adapter: account(one!.token), identity: one!.id },
      { adapter: account(two!.token), identity: two!.id },
    ],
    recipient: { to: `channel:${general!.id}`, chat: general!.id },
    threadId: thread!.id,
    inbound: {
      receiver: { adapter: account(one!.token, "gateway"), write: dm, live: true },
      from: { chat: `user:${person!.id}`, sender: person!.id },
    },
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
      await gateway.close();
      await media.close();
    },
  };
});
