import { createHmac } from "node:crypto";
import { describeChannelContract } from "@gw/channels/contract";
import { DEFAULT_SLACK_BOTS, signedSlackRequest, slackMessageEvent, startFakeMediaServer, startFakeSlack } from "@gw/testing";
import { rawRequest, testHttp } from "../contract-helpers.js";
import { slackPlugin } from "./plugin.js";
import { SlackSettingsSchema } from "./settings.js";

/** The app's signing secret, and a person writing to the bot in a DM. */
const SIGNING_SECRET = "contract-signing-secret";
const PERSON = "U0PERSON";
const DM = "D0DM000001";

/** A body Slack never sends, signed as Slack signs (v0 HMAC of timestamp and body). */
function signedGarbage(): ReturnType<typeof rawRequest> {
  const body = "{not json";
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac("sha256", SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest("hex")}`;
  return rawRequest({ headers: { "x-slack-request-timestamp": timestamp, "x-slack-signature": signature }, body }, { path: "/" });
}

describeChannelContract("slack", async () => {
  const fake = await startFakeSlack();
  const media = await startFakeMediaServer();
  const [one, two] = [DEFAULT_SLACK_BOTS[0]!, DEFAULT_SLACK_BOTS[1]!];
  const secrets = [one.token, two.token, SIGNING_SECRET];
  const http = testHttp({ secrets });
  const adapter = (token: string, accountId: string, signingSecret?: string) =>
    slackPlugin.create({
      channelId: "slack",
      accountId,
      settings: SlackSettingsSchema.parse({ botToken: token, apiBaseUrl: fake.baseUrl, ...(signingSecret === undefined ? {} : { signingSecret }) }),
      http: http.factory,
    });
  const event = (text: string, secret: string) =>
    rawRequest(signedSlackRequest(slackMessageEvent({ channel: DM, user: PERSON, text, botUserId: one.userId }), secret), { path: "/" });
  return {
    fake,
    accounts: [
      { adapter: adapter(one.token, "main"), identity: one.userId },
      { adapter: adapter(two.token, "other"), identity: two.userId },
    ],
    recipient: { to: "#general", chat: "C0FAKE0001" },
    threadId: "1700000000.000100",
    inbound: {
      webhook: {
        adapter: adapter(one.token, "events", SIGNING_SECRET),
        request: (text) => event(text, SIGNING_SECRET),
        forged: (text) => event(text, "not-the-signing-secret"),
        malformed: signedGarbage,
      },
      from: { chat: DM, sender: PERSON },
    },
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
