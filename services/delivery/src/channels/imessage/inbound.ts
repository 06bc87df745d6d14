/**
 * BlueBubbles webhooks (the server's Settings > API & Webhooks): JSON `{ type, data }` POSTed for
 * every event; `new-message` carries a Message (guid, text, isFromMe, handle, chats). BlueBubbles
 * signs nothing and sends no header of its own, so the webhook URL configured there carries the
 * server's password as a query parameter, as BlueBubbles' own API takes it:
 * `https://<gateway>/api/channels/<id>/webhook?password=<password>`.
 */
import type { InboundEndpoint, InboundMessage, InboundResult, RawInbound } from "@gw/channels";
import { z } from "zod";
import { inboundAttachment } from "../inbound-attachment.js";
import { accepted, jsonBody, refused, sameSecret, WEBHOOK_PATH } from "../webhook-helpers.js";

const MessageSchema = z.object({
  guid: z.string(),
  text: z.string().nullable().optional(),
  isFromMe: z.boolean().optional(),
  dateCreated: z.number().optional(),
  handle: z.object({ address: z.string() }).nullable().optional(),
  chats: z.array(z.object({ guid: z.string(), displayName: z.string().nullable().optional() })).optional(),
  attachments: z
    .array(z.object({ guid: z.string(), transferName: z.string().nullish(), mimeType: z.string().nullish(), totalBytes: z.number().int().nullish() }))
    .nullish(),
});

const EventSchema = z.object({ type: z.string(), data: z.unknown() });

/** `iMessage;+;chat123` is a group, `iMessage;-;+15551234567` a direct chat. */
const isGroupGuid = (guid: string) => guid.includes(";+;");

function senderOf(address: string): string {
  return address.includes("@") ? address.trim().toLowerCase() : address.replace(/[^\d+]/g, "");
}

/**
 * The webhook of one BlueBubbles server. Only `new-message` events carry messages; the Mac's own
 * messages (`isFromMe`, the bot's answers included) are marked as the bot's, so they are never
 * answered. iMessage has no bot mentions: in groups the agent answers only with
 * `groups.requireMention: false`. The answer goes to the chat's GUID, which keeps the service
 * (iMessage or SMS) the person used.
 */
export class BlueBubblesWebhook implements InboundEndpoint {
  constructor(private readonly password: string) {}

  async handle(req: RawInbound): Promise<InboundResult> {
    if (req.path !== WEBHOOK_PATH) return refused(404, `no iMessage endpoint at ${req.path}`);
    if (req.method !== "POST") return refused(405, "BlueBubbles webhooks are POST requests");
    if (!sameSecret(req.query.password, this.password)) return refused(401, "missing or wrong password query parameter");
    const event = EventSchema.safeParse(jsonBody(req));
    if (!event.success) return refused(400, "the body is not a BlueBubbles webhook event");
    if (event.data.type !== "new-message") return accepted([]);
    const parsed = MessageSchema.safeParse(event.data.data);
    if (!parsed.success) return refused(400, "a new-message event without a message");
    const message = parsed.data;
    const chat = message.chats?.[0]?.guid;
    const address = message.handle?.address;
    if (chat === undefined) return accepted([]);
    // The server keeps each file under its guid (GET /api/v1/attachment/<guid>/download, with the password).
    const attachments = (message.attachments ?? []).map((a) =>
      inboundAttachment({ name: a.transferName, mimeType: a.mimeType, size: a.totalBytes, id: a.guid }),
    );
    const inbound: InboundMessage = {
      eventId: message.guid,
      chat,
      sender: address === undefined ? "me" : senderOf(address),
      chatType: isGroupGuid(chat) ? "group" : "direct",
      mentioned: false,
      fromBot: message.isFromMe === true,
      text: message.text ?? "",
      ...(attachments.length > 0 ? { attachments } : {}),
      sentAt: message.dateCreated ?? Date.now(),
    };
    return accepted([inbound]);
  }
}
