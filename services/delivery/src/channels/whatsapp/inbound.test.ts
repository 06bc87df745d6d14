import { ChannelError } from "@gw/channels";
import { signedWhatsAppRequest, whatsappMessageNotification, whatsappStatusNotification, whatsappVerificationQuery } from "@gw/testing";
import { describe, expect, it } from "vitest";
import { rawRequest, testHttp } from "../contract-helpers.js";
import { WhatsAppWebhook } from "./inbound.js";
import { whatsappPlugin } from "./plugin.js";
import { WhatsAppSettingsSchema } from "./settings.js";

const PHONE_ID = "105500000000001";
const APP_SECRET = "wa-app-secret";
const VERIFY = "wa-verify-token";
const webhook = new WhatsAppWebhook({ phoneNumberId: PHONE_ID, appSecret: APP_SECRET, verifyToken: VERIFY });
const query = (token: string, challenge: string) => Object.fromEntries(new URLSearchParams(whatsappVerificationQuery(token, challenge)));

describe("WhatsApp webhooks", () => {
  it("answers the verification handshake with the challenge, verbatim, only for our token", async () => {
    const ok = await webhook.handle(rawRequest({ headers: {}, body: "" }, { method: "GET", query: query(VERIFY, "1158201444") }));
    expect(ok.reply).toMatchObject({ status: 200, body: "1158201444", headers: { "content-type": "text/plain; charset=utf-8" } });
    const wrong = await webhook.handle(rawRequest({ headers: {}, body: "" }, { method: "GET", query: query("guess", "1") }));
    expect(wrong.reply.status).toBe(403);
    const unset = new WhatsAppWebhook({ phoneNumberId: PHONE_ID, appSecret: APP_SECRET });
    expect((await unset.handle(rawRequest({ headers: {}, body: "" }, { method: "GET", query: query(VERIFY, "1") }))).reply.status).toBe(403);
  });

  it("takes notifications signed with the app secret and refuses the rest with 401", async () => {
    const payload = whatsappMessageNotification({ phoneNumberId: PHONE_ID, from: "15551234567", text: "hello", name: "Ada", id: "wamid.ONE" });
    const ok = await webhook.handle(rawRequest(signedWhatsAppRequest(payload, APP_SECRET)));
    expect(ok.reply.status).toBe(200);
    expect(ok.messages).toEqual([
      { eventId: "wamid.ONE", chat: "+15551234567", sender: "+15551234567", senderName: "Ada", chatType: "direct", mentioned: false, fromBot: false, text: "hello", sentAt: expect.any(Number) },
    ]);
    for (const signed of [signedWhatsAppRequest(payload, undefined), signedWhatsAppRequest(payload, "other")]) {
      expect(await webhook.handle(rawRequest(signed))).toEqual({ reply: expect.objectContaining({ status: 401 }), messages: [] });
    }
    const tampered = signedWhatsAppRequest(payload, APP_SECRET);
    expect((await webhook.handle(rawRequest({ ...tampered, body: tampered.body.replace("hello", "hullo") }))).reply.status).toBe(401);
    const noSecret = new WhatsAppWebhook({ phoneNumberId: PHONE_ID, verifyToken: VERIFY });
    expect((await noSecret.handle(rawRequest(signedWhatsAppRequest(payload, APP_SECRET)))).reply.status).toBe(403);
  });

  it("takes nothing from status updates or from another number's notifications", async () => {
    const status = await webhook.handle(rawRequest(signedWhatsAppRequest(whatsappStatusNotification(PHONE_ID, "15551234567"), APP_SECRET)));
    expect(status).toMatchObject({ reply: { status: 200 }, messages: [] });
    const other = whatsappMessageNotification({ phoneNumberId: "999", from: "15551234567", text: "hi" });
    expect((await webhook.handle(rawRequest(signedWhatsAppRequest(other, APP_SECRET)))).messages).toEqual([]);
    expect((await webhook.handle(rawRequest(signedWhatsAppRequest({ object: "page" }, APP_SECRET)))).reply.status).toBe(400);
  });
});

describe("WhatsApp group messages", () => {
  const GROUP = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD";

  it("acknowledges a group message and stores nothing, since answers go only to phone numbers", async () => {
    const http = testHttp({ secrets: ["EAAwa-token"] });
    const settings = WhatsAppSettingsSchema.parse({ accessToken: "EAAwa-token", phoneNumberId: PHONE_ID, appSecret: APP_SECRET });
    const adapter = whatsappPlugin.create({ channelId: "wa", accountId: "default", settings, http: http.factory });
    try {
      const post = (payload: Record<string, unknown>) => adapter.inbound!.webhook!.handle(rawRequest(signedWhatsAppRequest(payload, APP_SECRET)));
      const inGroup = await post(whatsappMessageNotification({ phoneNumberId: PHONE_ID, from: "15551234567", text: "@bot what is due?", groupId: GROUP }));
      expect(inGroup).toMatchObject({ reply: { status: 200 }, messages: [] });
      // The reason: a group id is no recipient the plugin can send to.
      expect(() => adapter.validateRecipient(GROUP)).toThrow(ChannelError);
      const direct = await post(whatsappMessageNotification({ phoneNumberId: PHONE_ID, from: "15551234567", text: "hi" }));
      expect(direct.messages).toEqual([expect.objectContaining({ chat: "+15551234567", chatType: "direct", text: "hi" })]);
    } finally {
      await http.close();
    }
  });
});
