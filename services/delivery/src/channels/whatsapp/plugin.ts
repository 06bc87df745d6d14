/**
 * WhatsApp (Cloud API): text and media by link to a phone number; a threadId makes the message a
 * reply quoting that message (`context.message_id`). The Cloud API has no polls and no albums.
 * Inbound: the webhook's verification handshake and signed notifications (inbound.ts).
 */
import {
  type ChannelAdapter,
  ChannelError,
  type ChannelInbound,
  type ChannelProbe,
  type ChannelTyping,
  definePlugin,
  type DeliveryReceipt,
  type InboundFiles,
  type OutboundMessage,
  receiptOf,
} from "@gw/channels";
import type { PluginContext } from "../registry.js";
import { readGraphError, WhatsAppApi, type WhatsAppContent } from "./api.js";
import { WhatsAppWebhook } from "./inbound.js";
import { WhatsAppFiles } from "./inbound-files.js";
import { CAPTIONED, WHATSAPP_CAPTION_LIMIT, whatsappMedium } from "./media.js";
import { normaliseWhatsAppRecipient, waDigits } from "./recipient.js";
import { type WhatsAppSettings, WhatsAppSettingsSchema } from "./settings.js";

export const WHATSAPP_TEXT_LIMIT = 4096;

const HAS_URL = /\bhttps?:\/\/\S/i;

function textContent(body: string): WhatsAppContent {
  // WhatsApp renders a link preview only when asked, and only for the first URL.
  return { type: "text", body, previewUrl: HAS_URL.test(body) };
}

/** `+1 555-000-1111` -> `+15550001111`, as the other channels name numbers. */
function displayNumber(display: string | undefined): string | undefined {
  const digits = display?.replace(/\D/g, "");
  return digits === undefined || digits === "" ? undefined : `+${digits}`;
}

export class WhatsAppAdapter implements ChannelAdapter {
  /** One medium per message: WhatsApp has no albums, and one part is then one message. */
  readonly limits = { textChunk: WHATSAPP_TEXT_LIMIT, mediaPerMessage: 1 };
  /** The webhook: the verification handshake and signed notifications. */
  readonly inbound?: ChannelInbound;
  /**
   * WhatsApp's indicator hangs off the message being answered (which it also marks read, as
   * any reply would); the answer clears it. Without that message's id nothing is shown. It
   * lasts 25 s: renewed well before, not every few seconds.
   */
  readonly typing: ChannelTyping = {
    show: async (_chat, _threadId, signal, replyingTo) => {
      if (replyingTo !== undefined) await this.api.readAndType(replyingTo, signal);
    },
    renewMs: 20_000,
  };

  constructor(
    private readonly api: WhatsAppApi,
    webhook?: { appSecret?: string; verifyToken?: string },
    /** The media people send (inbound-files.ts). */
    files?: InboundFiles,
  ) {
    if (webhook?.appSecret !== undefined || webhook?.verifyToken !== undefined) {
      const endpoint = new WhatsAppWebhook({ phoneNumberId: api.phoneNumberId, ...webhook });
      this.inbound = { webhook: endpoint, ...(files === undefined ? {} : { files }) };
    }
  }

  validateRecipient(to: string): string {
    return normaliseWhatsAppRecipient(to);
  }

  /**
   * Text alone is one text message. A medium carries the text as its caption when its type takes
   * one and the text fits; otherwise the text goes first as a message of its own.
   */
  async send(msg: OutboundMessage, signal: AbortSignal): Promise<DeliveryReceipt> {
    const to = waDigits(msg.to);
    if (msg.mediaUrls.length > this.limits.mediaPerMessage) {
      throw new ChannelError("unsupported", `WhatsApp takes one medium per message, not ${msg.mediaUrls.length}`);
    }
    const text = msg.text === undefined || msg.text === "" ? undefined : msg.text;
    const [url] = msg.mediaUrls;
    const send = (content: WhatsAppContent) => this.api.sendMessage(to, content, msg.threadId, signal);
    if (url === undefined) {
      if (text === undefined) throw new ChannelError("rejected", "nothing to send: no text and no media");
      return receiptOf([await send(textContent(text))]);
    }
    const medium = whatsappMedium(url);
    const caption = text !== undefined && CAPTIONED.has(medium.type) && text.length <= WHATSAPP_CAPTION_LIMIT ? text : undefined;
    const ids: string[] = [];
    if (text !== undefined && caption === undefined) ids.push(await send(textContent(text)));
    const media = { link: url, ...(caption === undefined ? {} : { caption }), ...(medium.filename === undefined ? {} : { filename: medium.filename }) };
    ids.push(await send({ type: medium.type, media }));
    return receiptOf(ids);
  }

  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    const number = await this.api.phoneNumber(signal);
    const identity = displayNumber(number.display_phone_number) ?? number.verified_name;
    return { reachable: true, ...(identity === undefined ? {} : { identity }) };
  }
}

/** The Cloud API's default throughput: 80 messages a second per business phone number. */
export const whatsappPlugin = definePlugin({
  kind: "whatsapp",
  title: "WhatsApp",
  settings: WhatsAppSettingsSchema,
  rates: [{ name: "per-number", scope: "account", max: 80, windowMs: 1_000 }],
  create: ({ settings, http }: PluginContext<WhatsAppSettings>) => {
    const client = http({
      name: "whatsapp",
      baseUrl: settings.apiBaseUrl,
      headers: { authorization: `Bearer ${settings.accessToken}` },
      secrets: [settings.accessToken, settings.appSecret, settings.verifyToken].filter((s): s is string => s !== undefined),
      errorBody: readGraphError,
    });
    const webhook = {
      ...(settings.appSecret === undefined ? {} : { appSecret: settings.appSecret }),
      ...(settings.verifyToken === undefined ? {} : { verifyToken: settings.verifyToken }),
    };
    return new WhatsAppAdapter(new WhatsAppApi(client, settings.phoneNumberId), webhook, new WhatsAppFiles(client, settings.accessToken));
  },
});
