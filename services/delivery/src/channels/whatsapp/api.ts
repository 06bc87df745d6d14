/**
 * The WhatsApp Cloud API (Graph API) as this plugin uses it: `POST /{phone-number-id}/messages`
 * with `messaging_product: "whatsapp"` answers `{ messages: [{ id: "wamid..." }] }`, and
 * `GET /{phone-number-id}` answers the business number. Authorised with a Bearer token. Errors
 * are `{ error: { message, type, code, error_subcode?, error_data?: { details }, fbtrace_id } }`;
 * throttling is told by the code (not always with a 429), and never says how long to wait.
 */
import type { ChannelErrorKind } from "@gw/channels";
import type { ErrorBodyInfo, HttpClient } from "@gw/http-client";
import { z } from "zod";
import { channelErrorOf, type PlatformErrorReading } from "../http-channel-error.js";

export type WhatsAppMediaType = "image" | "video" | "audio" | "document";

export interface WhatsAppMediaObject {
  link: string;
  /** image, video and document only; at most 1024 characters. */
  caption?: string;
  /** document only: the name (and so the icon) the recipient sees. */
  filename?: string;
}

/** What one message carries. On the wire, `type` names the field that holds it. */
export type WhatsAppContent =
  | { type: "text"; body: string; previewUrl: boolean }
  | { type: WhatsAppMediaType; media: WhatsAppMediaObject };

function wireContent(content: WhatsAppContent): Record<string, unknown> {
  return content.type === "text"
    ? { type: "text", text: { body: content.body, preview_url: content.previewUrl } }
    : { type: content.type, [content.type]: content.media };
}

const SentSchema = z.object({ messages: z.array(z.object({ id: z.string().min(1) })).min(1) });
const SuccessSchema = z.object({ success: z.literal(true) });
const PhoneNumberSchema = z.object({
  id: z.string().optional(),
  display_phone_number: z.string().optional(),
  verified_name: z.string().optional(),
});
export type WhatsAppPhoneNumber = z.output<typeof PhoneNumberSchema>;

const GraphErrorSchema = z.object({
  error: z.object({
    message: z.string().optional(),
    code: z.union([z.number(), z.string()]).optional(),
    error_subcode: z.union([z.number(), z.string()]).optional(),
    error_data: z.object({ details: z.string().optional() }).partial().optional(),
  }),
});

/**
 * Codes Meta lists as throttling (4 app calls, 80007 account rate limit, 130429 throughput,
 * 131048 spam rate limit, 131056 pair rate limit) and as transient on its side (1 unknown,
 * 2 service, 131000 something went wrong, 131016 service unavailable, 131057 maintenance mode,
 * 133004 server temporarily unavailable). Every other code is a refusal that will repeat.
 */
const THROTTLED = new Set(["4", "80007", "130429", "131048", "131056"]);
/** Of those, the limits of the app or the number as a whole, not of one recipient (131048, 131056). */
const ACCOUNT_THROTTLED = new Set(["4", "80007", "130429"]);
const TRANSIENT = new Set(["1", "2", "131000", "131016", "131057", "133004"]);

export function graphErrorKind(code: string | undefined): ChannelErrorKind | undefined {
  if (code === undefined) return undefined;
  if (THROTTLED.has(code)) return "rate_limited";
  if (TRANSIENT.has(code)) return "unavailable";
  return undefined;
}

/** Graph's message, with the details WhatsApp adds when they say more: "(#131026) Message undeliverable". */
export function graphErrorMessage(json: unknown): string | undefined {
  const body = GraphErrorSchema.safeParse(json);
  if (!body.success || body.data.error.message === undefined) return undefined;
  const { message, error_data } = body.data.error;
  const details = error_data?.details;
  return details !== undefined && details !== "" && !message.toLowerCase().includes(details.toLowerCase().replace(/\.$/, ""))
    ? `${message}: ${details}`
    : message;
}

/** Graph's `error.code`, as a string. */
function graphCode(json: unknown): string | undefined {
  const code = GraphErrorSchema.safeParse(json).data?.error.code;
  return code === undefined ? undefined : String(code);
}

export function readGraphError(info: ErrorBodyInfo): { message?: string; accountWide?: boolean } {
  const message = graphErrorMessage(info.json);
  const code = graphCode(info.json);
  return { ...(message === undefined ? {} : { message }), ...(code !== undefined && ACCOUNT_THROTTLED.has(code) ? { accountWide: true } : {}) };
}

export const GRAPH_ERRORS: PlatformErrorReading = {
  codeOf: graphCode,
  kindOf: (code) => graphErrorKind(code),
};

/** One business number's calls. Failures are ChannelErrors; an abort is the caller's AbortError. */
export class WhatsAppApi {
  constructor(
    private readonly http: HttpClient,
    readonly phoneNumberId: string,
  ) {}

  /** Sends one message to `to` (digits, no '+'); a `replyTo` makes it a reply quoting that message. */
  async sendMessage(to: string, content: WhatsAppContent, replyTo: string | undefined, signal: AbortSignal): Promise<string> {
    const json = {
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to,
      ...(replyTo === undefined ? {} : { context: { message_id: replyTo } }),
      ...wireContent(content),
    };
    const path = `${encodeURIComponent(this.phoneNumberId)}/messages`;
    const res = await this.call(() => this.http.requestJson({ method: "POST", path, json, signal, parse: SentSchema.parse }));
    return res.data.messages[0]!.id;
  }

  /**
   * Marks a received message read and shows "typing…" to its sender, until the next message or
   * 25 s pass (https://developers.facebook.com/docs/whatsapp/cloud-api/typing-indicators).
   */
  async readAndType(messageId: string, signal: AbortSignal): Promise<void> {
    const json = { messaging_product: "whatsapp", status: "read", message_id: messageId, typing_indicator: { type: "text" } };
    const path = `${encodeURIComponent(this.phoneNumberId)}/messages`;
    await this.call(() => this.http.requestJson({ method: "POST", path, json, signal, parse: SuccessSchema.parse }));
  }

  async phoneNumber(signal: AbortSignal): Promise<WhatsAppPhoneNumber> {
    const res = await this.call(() =>
      this.http.requestJson({
        path: encodeURIComponent(this.phoneNumberId),
        query: { fields: "display_phone_number,verified_name" },
        signal,
        parse: PhoneNumberSchema.parse,
      }),
    );
    return res.data;
  }

  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      throw channelErrorOf(err, GRAPH_ERRORS);
    }
  }
}
