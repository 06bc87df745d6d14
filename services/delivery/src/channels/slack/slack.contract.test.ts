import { describeChannelContract } from "@gw/channels/contract";
import { DEFAULT_SLACK_BOTS, startFakeMediaServer, startFakeSlack } from "@gw/testing";
import { testHttp } from "../contract-helpers.js";
import { slackPlugin } from "./plugin.js";
import { SlackSettingsSchema } from "./settings.js";

describeChannelContract("slack", async () => {
  const fake = await startFakeSlack();
  const media = await startFakeMediaServer();
  const [one, two] = [DEFAULT_SLACK_BOTS[0]!, DEFAULT_SLACK_BOTS[1]!];
  const secrets = [one.token, two.token];
  const http = testHttp({ secrets });
  const adapter = (token: string, accountId: string) =>
    slackPlugin.create({
      channelId: "slack",
      accountId,
      settings: SlackSettingsSchema.parse({ botToken: token, apiBaseUrl: fake.baseUrl }),
      http: http.factory,
    });
  return {
    fake,
    accounts: [
      { adapter: adapter(one.token, "main"), identity: one.userId },
      { adapter: adapter(two.token, "other"), identity: two.userId },
    ],
    recipient: { to: "#general", chat: "C0FAKE0001" },
    threadId: "1700000000.000100",
    invalidRecipients: ["", "general", "#General", "#two words", "c0fake0001", "X0FAKE0001", "@someone", "C01"],
    media: {
      urls: [media.url("photo.png"), media.url("report.pdf")],
      bytes: [media.files["photo.png"]!.data, media.files["report.pdf"]!.data],
    },
    expectedTextRequest: (text) => ({ method: "POST", path: "/api/chat.postMessage", body: { channel: "#general", text } }),
    secrets,
    close: async () => {
      await http.close();
      await fake.close();
      await media.close();
    },
  };
});
