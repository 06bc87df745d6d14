import { createHmac } from "node:crypto";
import { describeChannelContract } from "@gw/channels/contract";
import {
  DEFAULT_MEDIA_FILES,
  DEFAULT_WHATSAPP_NUMBERS,
  signedWhatsAppRequest,
  startFakeMediaServer,
  startFakeWhatsApp,
  whatsappMessageNotification,
} from "@gw/testing";
import { HttpClients } from "../../http-clients.js";
import { rawRequest } from "../contract-helpers.js";
import { whatsappPlugin } from "./plugin.js";
import { WhatsAppSettingsSchema } from "./settings.js";

const RECIPIENT = "15557654321";
/** The Meta app's secret, which signs every notification (X-Hub-Signature-256). */
const APP_SECRET = "contract-app-secret";

/** A body Meta never sends, signed as Meta signs. */
function signedGarbage(): ReturnType<typeof rawRequest> {
  const body = "{not json";
  return rawRequest({ headers: { "x-hub-signature-256": `sha256=${createHmac("sha256", APP_SECRET).update(body).digest("hex")}` }, body });
}

describeChannelContract("whatsapp", async () => {
  const fake = await startFakeWhatsApp();
  const media = await startFakeMediaServer();
  const [one, two] = DEFAULT_WHATSAPP_NUMBERS;
  const secrets = [one!.accessToken, two!.accessToken, APP_SECRET];
  // Every client scrubs every configured secret, as delivery's composition root makes them.
  const clients = new HttpClients(secrets);
  const account = (number: (typeof DEFAULT_WHATSAPP_NUMBERS)[number], appSecret?: string) =>
    whatsappPlugin.create({
      channelId: "whatsapp",
      accountId: number.phoneNumberId,
      settings: WhatsAppSettingsSchema.parse({
        accessToken: number.accessToken,
        phoneNumberId: number.phoneNumberId,
        apiBaseUrl: fake.baseUrl,
        ...(appSecret === undefined ? {} : { appSecret }),
      }),
      http: clients.factory,
    });
  const notification = (text: string, secret: string) =>
    rawRequest(signedWhatsAppRequest(whatsappMessageNotification({ phoneNumberId: one!.phoneNumberId, from: RECIPIENT, text }), secret));
  return {
    fake,
    accounts: [
      { adapter: account(one!), identity: one!.phoneNumberId },
      { adapter: account(two!), identity: two!.phoneNumberId },
    ],
    recipient: { to: `+${RECIPIENT}`, chat: RECIPIENT },
    threadId: "wamid.HBgLMTU1NTc2NTQzMjEVAgASGBQzQUQ5RjE2QjZCRTM2NUY2NDcxMQA=",
    // WhatsApp's indicator hangs off the message being answered.
    typingReplyTo: "wamid.HBgLMTU1NTc2NTQzMjEVAgASGBQzQUQ5RjE2QjZCRTM2NUY2NDcxMQA=",
    inbound: {
      webhook: {
        adapter: account(one!, APP_SECRET),
        request: (text) => notification(text, APP_SECRET),
        forged: (text) => notification(text, "not-the-app-secret"),
        malformed: signedGarbage,
      },
      from: { chat: `+${RECIPIENT}`, sender: `+${RECIPIENT}` },
    },
    invalidRecipients: ["", "not a number", "+0123456789", "+1 555", "+1234567890123456", "user:15557654321", "+1555765432x"],
    media: {
      urls: [media.url("photo.png"), media.url("report.pdf")],
      bytes: [DEFAULT_MEDIA_FILES["photo.png"]!.data, DEFAULT_MEDIA_FILES["report.pdf"]!.data],
    },
    expectedTextRequest: (text) => ({
      method: "POST",
      path: `/v21.0/${one!.phoneNumberId}/messages`,
      body: { messaging_product: "whatsapp", recipient_type: "individual", to: RECIPIENT, type: "text", text: { body: text, preview_url: false } },
    }),
    secrets,
    close: async () => {
      await clients.close();
      await fake.close();
      await media.close();
    },
  };
});
