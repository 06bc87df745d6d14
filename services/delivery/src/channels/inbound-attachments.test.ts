/** Every platform's inbound files, described from what the platform sends (nothing is downloaded). */
import { blueBubblesNewMessage, signedWhatsAppRequest, slackMessageEvent, telegramUpdate, whatsappMessageNotification } from "@gw/testing";
import { describe, expect, it } from "vitest";
import { rawRequest } from "./contract-helpers.js";
import { inboundOf, relevantMessage } from "./discord/gateway/message-create.js";
import { BlueBubblesWebhook } from "./imessage/inbound.js";
import { messageOfEnvelope } from "./signal/envelope-message.js";
import { slackMessage } from "./slack/inbound.js";
import { messageOfUpdate, UpdateSchema } from "./telegram/update-message.js";
import { WhatsAppWebhook } from "./whatsapp/inbound.js";

describe("inbound attachments", () => {
  it("Telegram: the largest photo size and a document, by file_id (no URL: it would hold the token), the caption as text", () => {
    const update = telegramUpdate({
      chatId: 4242,
      text: "look at this",
      files: {
        photo: [
          { file_id: "small", file_unique_id: "s", width: 90, height: 60, file_size: 1_000 },
          { file_id: "AgACAgQ-large", file_unique_id: "l", width: 1280, height: 853, file_size: 120_000 },
        ],
      },
    });
    const photo = messageOfUpdate(UpdateSchema.parse(update), { id: 1 });
    expect(photo).toMatchObject({ text: "look at this", attachments: [{ kind: "image", mimeType: "image/jpeg", size: 120_000, id: "AgACAgQ-large" }] });
    expect(photo!.attachments![0]!.url).toBeUndefined();

    const doc = telegramUpdate({ chatId: 4242, text: "", files: { document: { file_id: "BQAC-doc", file_name: "report.pdf", mime_type: "application/pdf", file_size: 2_500_000 } } });
    expect(messageOfUpdate(UpdateSchema.parse(doc), { id: 1 })).toMatchObject({
      text: "",
      attachments: [{ kind: "document", name: "report.pdf", mimeType: "application/pdf", size: 2_500_000, id: "BQAC-doc" }],
    });
    // An animation comes with a document copy for old clients: one attachment.
    const gif = telegramUpdate({ chatId: 4242, text: "", files: { animation: { file_id: "CgAC" }, document: { file_id: "CgAC" } } });
    expect(messageOfUpdate(UpdateSchema.parse(gif), { id: 1 })?.attachments).toEqual([{ kind: "animation", id: "CgAC" }]);
  });

  it("Slack: shared files with their url_private", () => {
    const event = slackMessageEvent({
      channel: "D0DM",
      user: "U1",
      text: "the logs",
      botUserId: "UBOT",
      files: [{ id: "F0LOG", name: "app.log", mimetype: "text/plain", size: 4_096, url_private: "https://files.slack.com/files-pri/T0-F0LOG/app.log" }],
    });
    expect(slackMessage((event.event as Parameters<typeof slackMessage>[0]), "UBOT")).toMatchObject({
      text: "the logs",
      attachments: [{ kind: "file", name: "app.log", mimeType: "text/plain", size: 4_096, url: "https://files.slack.com/files-pri/T0-F0LOG/app.log", id: "F0LOG" }],
    });
  });

  it("WhatsApp: an image with its caption and a voice note, by media id", async () => {
    const webhook = new WhatsAppWebhook({ phoneNumberId: "1055", appSecret: "s" });
    const take = async (payload: Record<string, unknown>) => (await webhook.handle(rawRequest(signedWhatsAppRequest(payload, "s")))).messages;
    const image = whatsappMessageNotification({ phoneNumberId: "1055", from: "15551234567", text: "a cat", media: { type: "image", object: { id: "MEDIA1", mime_type: "image/jpeg", sha256: "x" } } });
    expect(await take(image)).toMatchObject([{ text: "a cat", attachments: [{ kind: "image", mimeType: "image/jpeg", id: "MEDIA1" }] }]);
    const voice = whatsappMessageNotification({ phoneNumberId: "1055", from: "15551234567", text: "", media: { type: "audio", object: { id: "MEDIA2", mime_type: "audio/ogg; codecs=opus", voice: true } } });
    expect(await take(voice)).toMatchObject([{ text: "", attachments: [{ kind: "voice", mimeType: "audio/ogg; codecs=opus", id: "MEDIA2" }] }]);
  });

  it("Discord: attachments with their CDN URL, type and size", () => {
    const message = relevantMessage(
      {
        id: "1",
        channel_id: "9",
        author: { id: "7", username: "ada" },
        content: "",
        timestamp: new Date().toISOString(),
        attachments: [{ id: "55", filename: "shot.png", size: 2_048, url: "https://cdn.discordapp.com/attachments/9/55/shot.png?ex=1", content_type: "image/png" }],
      },
      "100",
    );
    expect(inboundOf(message!, "100", {})).toMatchObject({
      text: "",
      attachments: [{ kind: "image", name: "shot.png", mimeType: "image/png", size: 2_048, url: "https://cdn.discordapp.com/attachments/9/55/shot.png?ex=1", id: "55" }],
    });
  });

  it("Signal: a message of only an attachment is taken, by the bridge's attachment id", () => {
    const envelope = {
      envelope: {
        sourceNumber: "+15557770001",
        timestamp: 1_700_000_000_000,
        dataMessage: { message: null, attachments: [{ id: "zFpW3.jpg", contentType: "image/jpeg", filename: null, size: 88_000 }] },
      },
    };
    expect(messageOfEnvelope(envelope, "+15550001111")).toMatchObject({ text: "", attachments: [{ kind: "image", mimeType: "image/jpeg", size: 88_000, id: "zFpW3.jpg" }] });
  });

  it("iMessage: BlueBubbles attachments by guid", async () => {
    const webhook = new BlueBubblesWebhook("pw");
    const event = blueBubblesNewMessage({ chatGuid: "iMessage;-;+15551234567", from: "+15551234567", text: "" });
    (event.data as Record<string, unknown>).attachments = [{ guid: "AT-1", transferName: "IMG_0001.HEIC", mimeType: "image/heic", totalBytes: 1_500_000 }];
    const result = await webhook.handle(rawRequest({ headers: { "content-type": "application/json" }, body: JSON.stringify(event) }, { query: { password: "pw" } }));
    expect(result.messages).toMatchObject([{ text: "", attachments: [{ kind: "image", name: "IMG_0001.HEIC", mimeType: "image/heic", size: 1_500_000, id: "AT-1" }] }]);
  });
});
