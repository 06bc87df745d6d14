/**
 * WhatsApp Cloud API webhooks (https://developers.facebook.com/docs/graph-api/webhooks/getting-started):
 * the verification handshake (`GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`,
 * answered with the challenge when the token is ours) and event notifications, each POST signed
 * with the app secret in `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`.
 */
import type { InboundAttachment, InboundEndpoint, InboundMessage, InboundResult, RawInbound } from "@gw/channels";
import { z } from "zod";
import { inboundAttachment } from "../inbound-attachment.js";
import { accepted, hmacHex, jsonBody, refused, sameSecret, WEBHOOK_PATH } from "../webhook-helpers.js";

/** A media object: the Cloud API hands out an id; its URL needs a Graph API call with the token. */
const MediaSchema = z.object({
  id: z.string(),
  mime_type: z.string().optional(),
  caption: z.string().optional(),
  filename: z.string().optional(),
  voice: z.boolean().optional(),
});

const MEDIA_TYPES = ["image", "video", "document", "audio", "sticker"] as const;

const MessageSchema = z.object({
  from: z.string(),
  /** Set on a message in a group (the Groups API); `from` is then the member who wrote. */
  group_id: z.string().optional(),
  id: z.string(),
  timestamp: z.string(),
  type: z.string(),
  text: z.object({ body: z.string() }).optional(),
  button: z.object({ text: z.string() }).optional(),
  interactive: z
    .object({ button_reply: z.object({ title: z.string() }).optional(), list_reply: z.object({ title: z.string() }).optional() })
    .optional(),
  image: MediaSchema.optional(),
  video: MediaSchema.optional(),
  document: MediaSchema.optional(),
  audio: MediaSchema.optional(),
  sticker: MediaSchema.optional(),
});

const NotificationSchema = z.object({
  object: z.literal("whatsapp_business_account"),
  entry: z.array(
    z.object({
      changes: z.array(
        z.object({
          field: z.string(),
          value: z.object({
            metadata: z.object({ phone_number_id: z.string() }).optional(),
            contacts: z.array(z.object({ wa_id: z.string(), profile: z.object({ name: z.string() }).optional() })).optional(),
            messages: z.array(MessageSchema).optional(),
          }),
        }),
      ),
    }),
  ),
});

type WhatsAppMessage = z.output<typeof MessageSchema>;

/** What a person wrote: text, a button or list choice, a caption. Reactions, locations, contacts: nothing. */
function textOf(message: WhatsAppMessage): string | undefined {
  if (message.type === "text") return message.text?.body;
  if (message.type === "button") return message.button?.text;
  if (message.type === "interactive") return message.interactive?.button_reply?.title ?? message.interactive?.list_reply?.title;
  const media = mediaOf(message);
  return media === undefined ? undefined : (media.caption ?? "");
}

function mediaOf(message: WhatsAppMessage): z.output<typeof MediaSchema> | undefined {
  const type = MEDIA_TYPES.find((t) => t === message.type);
  return type === undefined ? undefined : message[type];
}

/** The message's file, described by its media id (never downloaded). */
function attachmentsOf(message: WhatsAppMessage): InboundAttachment[] {
  const media = mediaOf(message);
  if (media === undefined) return [];
  const kind = message.type === "audio" && media.voice === true ? "voice" : message.type;
  return [inboundAttachment({ kind, name: media.filename, mimeType: media.mime_type, id: media.id })];
}

/**
 * The endpoint of one phone number (`phoneNumberId`). Notifications for other numbers of the same
 * app are not this account's: give each number its own webhook URL (Meta's per-number override)
 * pointing at `/api/channels/<id>/<accountId>/webhook`. Statuses (sent, delivered, read) carry no
 * message. People are E.164 numbers, and every message taken is a direct chat: a group message
 * (`group_id`) is acknowledged and stored nowhere, because the plugin sends only to phone numbers,
 * so the answer would go to the member privately (and a pairing code to a stranger in the group).
 */
export class WhatsAppWebhook implements InboundEndpoint {
  constructor(
    private readonly opts: { phoneNumberId: string; appSecret?: string; verifyToken?: string },
  ) {}

  async handle(req: RawInbound): Promise<InboundResult> {
    if (req.path !== WEBHOOK_PATH) return refused(404, `no WhatsApp endpoint at ${req.path}`);
    if (req.method === "GET") return this.verify(req);
    if (req.method !== "POST") return refused(405, "WhatsApp webhooks are GET (verification) or POST");
    if (this.opts.appSecret === undefined) return refused(403, "no appSecret is configured to check X-Hub-Signature-256");
    const expected = `sha256=${hmacHex(this.opts.appSecret, req.body)}`;
    if (!sameSecret(req.headers["x-hub-signature-256"]?.toLowerCase(), expected)) {
      return refused(401, "missing or wrong X-Hub-Signature-256");
    }
    const parsed = NotificationSchema.safeParse(jsonBody(req));
    if (!parsed.success) return refused(400, "the body is not a WhatsApp Business Account notification");
    const messages: InboundMessage[] = [];
    for (const change of parsed.data.entry.flatMap((e) => e.changes)) {
      if (change.field !== "messages" || change.value.metadata?.phone_number_id !== this.opts.phoneNumberId) continue;
      const names = new Map((change.value.contacts ?? []).map((c) => [c.wa_id, c.profile?.name]));
      for (const message of change.value.messages ?? []) {
        if (message.group_id !== undefined) continue;
        const text = textOf(message);
        if (text === undefined) continue;
        const attachments = attachmentsOf(message);
        const number = `+${message.from.replace(/\D/g, "")}`;
        const name = names.get(message.from);
        messages.push({
          eventId: message.id,
          chat: number,
          sender: number,
          ...(name === undefined ? {} : { senderName: name }),
          chatType: "direct",
          mentioned: false,
          fromBot: false,
          text,
          ...(attachments.length > 0 ? { attachments } : {}),
          sentAt: Number(message.timestamp) * 1000,
        });
      }
    }
    return accepted(messages);
  }

  /** The subscription handshake: the challenge back, verbatim, when the verify token is ours. */
  private verify(req: RawInbound): InboundResult {
    const token = this.opts.verifyToken;
    if (req.query["hub.mode"] !== "subscribe" || token === undefined || !sameSecret(req.query["hub.verify_token"], token)) {
      return refused(403, "the verification token does not match");
    }
    const challenge = req.query["hub.challenge"] ?? "";
    return { reply: { status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: challenge }, messages: [] };
  }
}
