import { signedSlackRequest, slackChannelCreatedEvent, slackMessageEvent, slackUrlVerification, slackUserEvent } from "@gw/testing";
import { describe, expect, it } from "vitest";
import { rawRequest, testHttp } from "../contract-helpers.js";
import { SlackEvents, slackSignatureValid } from "./inbound.js";
import { slackPlugin } from "./plugin.js";
import { SlackSettingsSchema } from "./settings.js";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const BOT = "U0BOTONE";
const NOW = 1_700_000_000_000;
const events = new SlackEvents(SECRET, () => NOW);
const at = (offsetSeconds: number) => ({ timestamp: NOW / 1000 + offsetSeconds });

describe("Slack request signatures", () => {
  const payload = slackMessageEvent({ channel: "D0DM000001", user: "U0PERSON", text: "hi", botUserId: BOT });

  it("accepts the v0 HMAC of the raw body within five minutes either way", () => {
    for (const offset of [0, -299, 299]) expect(slackSignatureValid(rawRequest(signedSlackRequest(payload, SECRET, at(offset))), SECRET, NOW)).toBe(true);
  });

  it("refuses stale, future, wrong, missing and re-bodied signatures", () => {
    const valid = signedSlackRequest(payload, SECRET, at(0));
    const cases = [
      signedSlackRequest(payload, SECRET, at(-301)),
      signedSlackRequest(payload, SECRET, at(301)),
      signedSlackRequest(payload, "another-secret", at(0)),
      { ...valid, headers: { ...valid.headers, "x-slack-signature": "" } },
      { ...valid, headers: { "content-type": "application/json" } },
      { ...valid, body: valid.body.replace('"hi"', '"hi!"') },
      { ...valid, headers: { ...valid.headers, "x-slack-request-timestamp": "soon" } },
    ];
    for (const req of cases) expect(slackSignatureValid(rawRequest(req), SECRET, NOW)).toBe(false);
  });
});

describe("Slack events endpoint", () => {
  const post = (payload: Record<string, unknown>, opts = at(0)) => events.handle(rawRequest(signedSlackRequest(payload, SECRET, opts), { path: "/" }));

  it("answers url_verification with its challenge, only when signed", async () => {
    const ok = await post(slackUrlVerification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"));
    expect(ok.reply.status).toBe(200);
    expect(JSON.parse(ok.reply.body!)).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
    expect((await post(slackUrlVerification("x"), at(-600))).reply.status).toBe(401);
  });

  it("refuses a bad signature with 401 and takes nothing", async () => {
    const result = await events.handle(rawRequest(signedSlackRequest(slackMessageEvent({ channel: "D0DM000001", user: "U0PERSON", text: "hi", botUserId: BOT }), "nope")));
    expect(result).toEqual({ reply: expect.objectContaining({ status: 401 }), messages: [] });
  });

  it("parses a DM, and a channel mention with the mention taken out", async () => {
    const dm = await post(slackMessageEvent({ channel: "D0DM000001", user: "U0PERSON", text: "hello", botUserId: BOT, ts: "1700000000.000100" }));
    expect(dm.messages).toEqual([
      { eventId: "D0DM000001:1700000000.000100", chat: "D0DM000001", sender: "U0PERSON", chatType: "direct", mentioned: false, fromBot: false, text: "hello", sentAt: 1_700_000_000_000 },
    ]);
    const mention = await post(slackMessageEvent({ type: "app_mention", channel: "C0FAKE0001", user: "U0PERSON", text: `<@${BOT}> status please`, botUserId: BOT, threadTs: "1699999999.000001" }));
    expect(mention.messages[0]).toMatchObject({ chatType: "group", mentioned: true, text: "status please", threadId: "1699999999.000001" });
    const plain = await post(slackMessageEvent({ channel: "C0FAKE0001", user: "U0PERSON", text: "no bot here", botUserId: BOT }));
    expect(plain.messages[0]).toMatchObject({ chatType: "group", mentioned: false });
  });

  it("gives a message's `message` and `app_mention` events one event id", async () => {
    const ts = "1700000001.000200";
    const a = await post(slackMessageEvent({ channel: "C0FAKE0001", user: "U0PERSON", text: `<@${BOT}> hi`, botUserId: BOT, ts }));
    const b = await post(slackMessageEvent({ type: "app_mention", channel: "C0FAKE0001", user: "U0PERSON", text: `<@${BOT}> hi`, botUserId: BOT, ts }));
    expect(a.messages[0]!.eventId).toBe(b.messages[0]!.eventId);
    expect(a.messages[0]).toEqual(b.messages[0]);
  });

  it("marks bots, the bot itself included, and skips edits and joins", async () => {
    expect((await post(slackMessageEvent({ channel: "C0FAKE0001", user: "U0OTHER", botId: "B0OTHER", text: "beep", botUserId: BOT }))).messages[0]!.fromBot).toBe(true);
    expect((await post(slackMessageEvent({ channel: "D0DM000001", user: BOT, text: "my answer", botUserId: BOT }))).messages[0]!.fromBot).toBe(true);
    for (const subtype of ["message_changed", "message_deleted", "channel_join"]) {
      expect((await post(slackMessageEvent({ channel: "C0FAKE0001", user: "U0PERSON", text: "x", subtype, botUserId: BOT }))).messages).toEqual([]);
    }
  });

  it("answers 404 and 405 for other paths and methods, 400 for what is not an event", async () => {
    const signed = signedSlackRequest(slackUrlVerification("c"), SECRET, at(0));
    expect((await events.handle(rawRequest(signed, { path: "/elsewhere" }))).reply.status).toBe(404);
    expect((await events.handle(rawRequest(signed, { method: "GET" }))).reply.status).toBe(405);
    expect((await post({ type: "something_new" })).reply.status).toBe(400);
  });
});

describe("Slack events of the plugin", () => {
  it("acknowledges events that are not messages with 200 and stores nothing, whatever their fields hold", async () => {
    const http = testHttp({ secrets: ["xoxb-slack-bot-token"] });
    const settings = SlackSettingsSchema.parse({ botToken: "xoxb-slack-bot-token", signingSecret: SECRET });
    const inbound = slackPlugin.create({ channelId: "slack", accountId: "default", settings, http: http.factory }).inbound!.webhook!;
    const post = (payload: Record<string, unknown>) => inbound.handle(rawRequest(signedSlackRequest(payload, SECRET), { path: "/" }));
    try {
      const events = [
        slackChannelCreatedEvent({ channelId: "C0NEWCHAN1", name: "launch", creator: "U0PERSON", botUserId: BOT }),
        slackUserEvent({ type: "user_change", userId: "U0PERSON", name: "Ada", botUserId: BOT }),
        slackUserEvent({ type: "team_join", userId: "U0NEWBIE1", name: "Bo", botUserId: BOT }),
      ];
      for (const event of events) {
        const result = await post(event);
        expect(result.reply.status).toBe(200);
        expect(result.messages).toEqual([]);
      }
      // A message event is still read after them.
      const message = await post(slackMessageEvent({ channel: "D0DM000001", user: "U0PERSON", text: "hello", botUserId: BOT }));
      expect(message.messages).toEqual([expect.objectContaining({ chat: "D0DM000001", text: "hello" })]);
    } finally {
      await http.close();
    }
  });
});
