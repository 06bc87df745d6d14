/**
 * WhatsApp Cloud API (Graph API, https://developers.facebook.com/docs/whatsapp/cloud-api):
 * `POST /{version}/{phone-number-id}/messages` with a Bearer token and
 * `{ messaging_product: "whatsapp", to, type, text | image | document | ..., context? }`
 * -> `{ messaging_product, contacts: [{ input, wa_id }], messages: [{ id: "wamid..." }] }`;
 * `{ messaging_product, status: "read", message_id, typing_indicator? }` marks a received message
 * read (and shows "typing…") -> `{ success: true }`;
 * `GET /{version}/{phone-number-id}` answers the phone-number object. Errors are
 * `{ error: { message, type, code, error_subcode?, error_data?, fbtrace_id } }`; a 429 does
 * not say how long to wait.
 */
import { randomBytes } from "node:crypto";
import {
  bearerToken,
  bodyFields,
  type FakeMedia,
  type FakeReply,
  type FakeRequest,
  type PlatformContext,
  type PlatformFake,
  startPlatformFake,
} from "./platform-fake.js";

export const WHATSAPP_TEXT_LIMIT = 4096;
export const WHATSAPP_CAPTION_LIMIT = 1024;

export interface FakeWhatsAppNumber {
  phoneNumberId: string;
  accessToken: string;
  displayPhoneNumber: string;
  verifiedName: string;
}

export interface FakeWhatsApp extends PlatformFake {
  readonly numbers: readonly FakeWhatsAppNumber[];
  /** The Graph API version in every path, e.g. "v21.0". */
  readonly version: string;
  /** Every read receipt, in order, and whether it showed "typing…". */
  readonly reads: ReadonlyArray<{ account: string; messageId: string; typing: boolean }>;
  /**
   * Keeps a file a person sent and answers its media id: `GET /<version>/<media id>` answers its
   * URL (on the fake's own origin, `/media/<id>`, which needs the token too) and type.
   */
  keepMedia(data: Uint8Array, mimeType: string): string;
  /** The media ids downloaded, in order. */
  readonly mediaDownloads: readonly string[];
}

export const DEFAULT_WHATSAPP_NUMBERS: readonly FakeWhatsAppNumber[] = [
  { phoneNumberId: "105500000000001", accessToken: "EAAfake-whatsapp-token-one", displayPhoneNumber: "+1 555-000-1111", verifiedName: "Fake One" },
  { phoneNumberId: "105500000000002", accessToken: "EAAfake-whatsapp-token-two", displayPhoneNumber: "+1 555-000-2222", verifiedName: "Fake Two" },
];

type Params = Record<string, unknown>;
const MEDIA_TYPES = ["image", "document", "video", "audio", "sticker"];

export async function startFakeWhatsApp(
  opts: { numbers?: readonly FakeWhatsAppNumber[]; version?: string; allowedRecipients?: readonly string[] } = {},
): Promise<FakeWhatsApp> {
  const numbers = [...(opts.numbers ?? DEFAULT_WHATSAPP_NUMBERS)];
  const version = opts.version ?? "v21.0";
  const allowed = opts.allowedRecipients?.map((r) => r.replace(/^\+/, ""));
  const reads: Array<{ account: string; messageId: string; typing: boolean }> = [];
  const media = new Map<string, { data: Uint8Array; mimeType: string }>();
  const mediaDownloads: string[] = [];
  let nextMedia = 880_000_000_000_001;
  let origin = "";

  const route = (req: FakeRequest, ctx: PlatformContext): FakeReply => {
    const download = /^\/media\/(\d+)$/.exec(req.path);
    if (download !== null && req.method === "GET") return mediaDownload(download[1]!, req);
    const match = new RegExp(`^/${version.replace(".", "\\.")}/(\\d+)(/messages)?$`).exec(req.path);
    if (match === null) return graphError(400, "Unknown path components", "OAuthException", 2500);
    const token = bearerToken(req) ?? req.query.access_token;
    const owner = numbers.find((n) => n.accessToken === token);
    if (owner === undefined) return graphError(401, "Invalid OAuth access token - Cannot parse access token", "OAuthException", 190);
    const id = match[1]!;
    const kept = media.get(id);
    if (kept !== undefined && req.method === "GET" && match[2] === undefined) {
      return { status: 200, json: { messaging_product: "whatsapp", url: `${origin}/media/${id}`, mime_type: kept.mimeType, file_size: kept.data.byteLength, id } };
    }
    const verb = match[2] === undefined ? "get" : "post";
    if (owner.phoneNumberId !== id || (verb === "get") !== (req.method === "GET")) {
      const message = `Unsupported ${verb} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`;
      return graphError(400, message, "GraphMethodException", 100, { error_subcode: 33 });
    }
    if (verb === "get") return phoneNumber(owner, req.query.fields);
    return sendMessage(owner, req, ctx);
  };

  const sendMessage = (owner: FakeWhatsAppNumber, req: FakeRequest, ctx: PlatformContext): FakeReply => {
    if (req.bodyError !== undefined) return invalid("(#100) Invalid parameter");
    const body = bodyFields(req);
    if (body.messaging_product !== "whatsapp") return invalid("(#100) The parameter messaging_product is required.");
    if (body.status !== undefined) return markRead(owner, body);
    const to = typeof body.to === "string" ? body.to : "";
    const waId = to.replace(/^\+/, "");
    if (!/^[1-9]\d{6,14}$/.test(waId)) return graphError(400, "(#131009) Parameter value is not valid", "OAuthException", 131009, { error_data: { messaging_product: "whatsapp", details: "Invalid 'to' parameter" } });
    if (allowed !== undefined && !allowed.includes(waId)) {
      return graphError(400, "(#131030) Recipient phone number not in allowed list", "OAuthException", 131030, { error_data: { messaging_product: "whatsapp", details: "Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again." } });
    }
    const type = typeof body.type === "string" ? body.type : "text";
    const content = body[type] as Params | undefined;
    let text: string | undefined;
    const media: FakeMedia[] = [];
    if (type === "text") {
      text = typeof content?.body === "string" ? content.body : undefined;
      if (text === undefined || text === "") return invalid("(#100) The parameter text['body'] is required.");
      if (text.length > WHATSAPP_TEXT_LIMIT) return invalid(`(#100) Param text['body'] must be at most ${WHATSAPP_TEXT_LIMIT} characters long.`);
    } else if (MEDIA_TYPES.includes(type)) {
      const link = content?.link;
      if (typeof link !== "string" && typeof content?.id !== "string") return invalid(`(#100) The parameter ${type}['link'] or ${type}['id'] is required.`);
      if (typeof link === "string" && !/^https?:\/\/\S+$/i.test(link)) return invalid(`(#100) Param ${type}['link'] is not a valid URI.`);
      const caption = typeof content?.caption === "string" ? content.caption : undefined;
      if (caption !== undefined && caption.length > WHATSAPP_CAPTION_LIMIT) return invalid(`(#100) Param ${type}['caption'] must be at most ${WHATSAPP_CAPTION_LIMIT} characters long.`);
      text = caption;
      media.push({ ...(typeof link === "string" ? { url: link } : {}), kind: type, ...(typeof content?.filename === "string" ? { filename: content.filename } : {}) });
    } else {
      return invalid(`(#100) Param type must be one of {TEXT, IMAGE, DOCUMENT, VIDEO, AUDIO, STICKER, ...} - got "${type}".`);
    }
    const replyTo = (body.context as Params | undefined)?.message_id;
    const id = `wamid.${Buffer.from(`fake.${waId}.${randomBytes(9).toString("hex")}`).toString("base64")}`;
    ctx.deliver({
      id,
      account: owner.phoneNumberId,
      chat: waId,
      ...(text === undefined ? {} : { text }),
      media,
      ...(typeof replyTo === "string" ? { threadId: replyTo } : {}),
    });
    return { status: 200, json: { messaging_product: "whatsapp", contacts: [{ input: to, wa_id: waId }], messages: [{ id }] } };
  };

  const markRead = (owner: FakeWhatsAppNumber, body: Params): FakeReply => {
    if (body.status !== "read") return invalid("(#100) Param status must be one of {READ}");
    if (typeof body.message_id !== "string" || !body.message_id.startsWith("wamid.")) return invalid("(#100) Invalid parameter message_id");
    const indicator = body.typing_indicator as Params | undefined;
    if (indicator !== undefined && indicator.type !== "text") return invalid("(#100) Param typing_indicator['type'] must be one of {TEXT}");
    reads.push({ account: owner.phoneNumberId, messageId: body.message_id, typing: indicator !== undefined });
    return { status: 200, json: { success: true } };
  };

  /** The file behind a media URL: the number's token is needed here too, as on the real CDN. */
  const mediaDownload = (id: string, req: FakeRequest): FakeReply => {
    if (!numbers.some((n) => n.accessToken === bearerToken(req))) return graphError(401, "Invalid OAuth access token - Cannot parse access token", "OAuthException", 190);
    const kept = media.get(id);
    if (kept === undefined) return { status: 404, text: "Not Found" };
    mediaDownloads.push(id);
    return { status: 200, headers: { "content-type": kept.mimeType }, bytes: kept.data };
  };

  const fake = await startPlatformFake({
    basePath: `/${version}`,
    tellsRetryAfter: false,
    dedupesOnClientKey: false,
    wire: {
      route,
      reject: ({ status = 400, reason }) =>
        graphError(status, reason ?? "(#131026) Message undeliverable", "OAuthException", 131026, { error_data: { messaging_product: "whatsapp", details: "Message Undeliverable." } }),
      rateLimit: () =>
        graphError(429, "(#130429) Rate limit hit", "OAuthException", 130429, { error_data: { messaging_product: "whatsapp", details: "Cloud API message throughput has been reached." } }),
      unavailable: ({ status = 500 }) =>
        status === 503
          ? graphError(503, "(#2) Service temporarily unavailable", "OAuthException", 2)
          : graphError(status, "An unknown error has occurred.", "OAuthException", 1),
    },
  });
  origin = new URL(fake.baseUrl).origin;
  const keepMedia = (data: Uint8Array, mimeType: string) => {
    const id = String(nextMedia++);
    media.set(id, { data, mimeType });
    return id;
  };
  return Object.assign(fake, { numbers, version, reads, keepMedia, mediaDownloads });
}

function phoneNumber(owner: FakeWhatsAppNumber, fields: string | undefined): FakeReply {
  const all: Params = {
    verified_name: owner.verifiedName,
    code_verification_status: "VERIFIED",
    display_phone_number: owner.displayPhoneNumber,
    quality_rating: "GREEN",
    platform_type: "CLOUD_API",
    throughput: { level: "STANDARD" },
    id: owner.phoneNumberId,
  };
  if (fields === undefined) return { status: 200, json: all };
  const wanted = new Set([...fields.split(","), "id"]);
  return { status: 200, json: Object.fromEntries(Object.entries(all).filter(([key]) => wanted.has(key))) };
}

function invalid(message: string): FakeReply {
  return graphError(400, message, "OAuthException", 100);
}

function graphError(status: number, message: string, type: string, code: number, extra: Params = {}): FakeReply {
  return { status, json: { error: { message, type, code, ...extra, fbtrace_id: `A${randomBytes(8).toString("base64url")}` } } };
}
