/**
 * WhatsApp Cloud API webhook notifications as Meta sends them
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components): a
 * `whatsapp_business_account` entry with a `messages` change, signed with the app secret in
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`; and the verification handshake's query.
 */
import { createHmac } from "node:crypto";

export interface WhatsAppMessageInput {
  /** The phone number id the message was sent to (the account's `phoneNumberId`). */
  phoneNumberId: string;
  /** The sender's wa_id: digits, no "+". */
  from: string;
  text: string;
  name?: string;
  /** Default: a fresh wamid. */
  id?: string;
  displayPhoneNumber?: string;
  /** A media message instead of text: its type and media object (`id`, `mime_type`...); `text` is the caption. */
  media?: { type: "image" | "video" | "document" | "audio" | "sticker"; object: Record<string, unknown> };
  /**
   * A message in a group made with the Groups API: its `group_id` (an opaque string such as
   * "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD"); `from` is the member.
   * https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/group/
   */
  groupId?: string;
}

let seq = 0;

export function whatsappMessageNotification(input: WhatsAppMessageInput): Record<string, unknown> {
  const id = input.id ?? `wamid.HBgL${Date.now().toString(36)}${String(++seq).padStart(6, "0")}`;
  return {
    object: "whatsapp_business_account",
    entry: [
      {
        id: "102290129340398",
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: input.displayPhoneNumber ?? "15550001111", phone_number_id: input.phoneNumberId },
              contacts: [{ profile: { name: input.name ?? "Ada" }, wa_id: input.from }],
              messages: [
                {
                  from: input.from,
                  ...(input.groupId === undefined ? {} : { group_id: input.groupId }),
                  id,
                  timestamp: String(Math.floor(Date.now() / 1000)),
                  ...messageContent(input),
                },
              ],
            },
          },
        ],
      },
    ],
  };
}

function messageContent(input: WhatsAppMessageInput): Record<string, unknown> {
  if (input.media === undefined) return { type: "text", text: { body: input.text } };
  return { type: input.media.type, [input.media.type]: { ...input.media.object, ...(input.text === "" ? {} : { caption: input.text }) } };
}

/** A status notification (sent, delivered, read): no message to answer. */
export function whatsappStatusNotification(phoneNumberId: string, recipient: string): Record<string, unknown> {
  return {
    object: "whatsapp_business_account",
    entry: [
      {
        id: "102290129340398",
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "15550001111", phone_number_id: phoneNumberId },
              statuses: [{ id: "wamid.status", status: "delivered", timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: recipient }],
            },
          },
        ],
      },
    ],
  };
}

/** The headers and body of a notification signed with the app secret (undefined: unsigned). */
export function signedWhatsAppRequest(payload: Record<string, unknown>, appSecret: string | undefined): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (appSecret !== undefined) headers["x-hub-signature-256"] = `sha256=${createHmac("sha256", appSecret).update(body).digest("hex")}`;
  return { headers, body };
}

/** The query of Meta's subscription check. */
export function whatsappVerificationQuery(verifyToken: string, challenge: string): string {
  return new URLSearchParams({ "hub.mode": "subscribe", "hub.verify_token": verifyToken, "hub.challenge": challenge }).toString();
}
