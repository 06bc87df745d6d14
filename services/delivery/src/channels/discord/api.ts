/**
 * The Discord REST API v10 as this plugin uses it (discord.com/developers/docs): create a
 * message in a channel (JSON, or multipart with `payload_json` and `files[n]` when there are
 * uploads), open a DM channel with a user, read the bot's own user. Authorised with
 * `Authorization: Bot <token>`. Errors are `{ message, code, errors? }`; a 429 says
 * `retry_after` in seconds (with a fraction) in its body.
 */
import type { ErrorBodyInfo, HttpClient, ResponseHeaders } from "@gw/http-client";
import { retryAfterFromBody } from "@gw/http-client";
import { z } from "zod";
import { channelErrorOf, type PlatformErrorReading } from "../http-channel-error.js";

/** Discord's JSON error codes the plugin acts on. */
export const DISCORD_CODES = {
  unknownChannel: "10003",
  unknownUser: "10013",
  cannotMessageUser: "50007",
} as const;

/** Discord asks every HTTP client to name itself as `DiscordBot ($url, $versionNumber)`. */
export const DISCORD_USER_AGENT = "DiscordBot (agent-gateway, 0.1.0)";

export interface DiscordPoll {
  question: { text: string };
  answers: Array<{ poll_media: { text: string } }>;
  allow_multiselect: boolean;
  /** Hours the poll stays open (1-768). */
  duration: number;
}

/** The JSON body of "Create Message" (the fields this plugin sends). */
export interface CreateMessageBody {
  content?: string;
  poll?: DiscordPoll;
  /** A reply: the message it quotes, in the same channel. */
  message_reference?: { message_id: string; fail_if_not_exists: boolean };
  /** Uploads, matched to the `files[n]` form parts by `id`. */
  attachments?: Array<{ id: number; filename: string }>;
  allowed_mentions: { parse: Array<"users" | "roles" | "everyone"> };
  /** At most 25 characters; with enforce_nonce, a repeat within minutes returns the first message. */
  nonce: string;
  enforce_nonce: true;
}

export interface UploadFile {
  filename: string;
  contentType: string;
  data: Uint8Array;
}

export interface CreatedMessage {
  id: string;
  /** The route's bucket is used up for this long (X-RateLimit-Remaining 0). */
  cooldownMs?: number;
}

const MessageSchema = z.object({ id: z.string().min(1), channel_id: z.string().min(1) });
const ChannelSchema = z.object({ id: z.string().min(1) });
const ChannelInfoSchema = z.object({ id: z.string().min(1), type: z.number().int(), parent_id: z.string().nullish() });
export type DiscordChannelInfo = z.output<typeof ChannelInfoSchema>;
const UserSchema = z.object({ id: z.string().min(1), username: z.string(), discriminator: z.string().optional() });
export type DiscordUser = z.output<typeof UserSchema>;

const ErrorBodySchema = z.object({
  message: z.string().optional(),
  code: z.union([z.number(), z.string()]).optional(),
  errors: z.unknown().optional(),
  global: z.boolean().optional(),
});

/**
 * The field errors of an "Invalid Form Body" (50035), which nest by path:
 * `{ content: { _errors: [{ code, message }] } }` -> "content: Must be 2000 or fewer in length."
 */
export function formErrors(errors: unknown, path: string[] = [], out: string[] = []): string[] {
  if (errors === null || typeof errors !== "object" || out.length >= 3) return out;
  for (const [key, value] of Object.entries(errors as Record<string, unknown>)) {
    if (key === "_errors" && Array.isArray(value)) {
      for (const item of value) {
        const message = (item as { message?: unknown } | null)?.message;
        if (typeof message === "string" && out.length < 3) out.push(`${path.join(".") || "body"}: ${message}`);
      }
    } else {
      formErrors(value, [...path, key], out);
    }
  }
  return out;
}

/** Discord's reason, its code and any field errors: "Missing Permissions (code 50013)". */
export function discordErrorMessage(json: unknown): string | undefined {
  const body = ErrorBodySchema.safeParse(json);
  if (!body.success || body.data.message === undefined) return undefined;
  const { message, code, errors, global } = body.data;
  const fields = formErrors(errors);
  return [
    message,
    code !== undefined && code !== 0 ? ` (code ${code})` : "",
    global === true ? " (global limit)" : "",
    fields.length > 0 ? `: ${fields.join("; ")}` : "",
  ].join("");
}

/**
 * Whether a 429 is Discord's global limit, which holds every request the bot makes (not one
 * route's bucket): `global: true` in the body, `X-RateLimit-Scope: global` or `X-RateLimit-Global`.
 */
export function isGlobalRateLimit(info: ErrorBodyInfo): boolean {
  if (info.status !== 429) return false;
  if (ErrorBodySchema.safeParse(info.json).data?.global === true) return true;
  return header(info.headers, "x-ratelimit-scope")?.trim().toLowerCase() === "global" || header(info.headers, "x-ratelimit-global")?.trim().toLowerCase() === "true";
}

export function readDiscordError(info: ErrorBodyInfo): { message?: string; retryAfterMs?: number; accountWide?: boolean } {
  const message = discordErrorMessage(info.json);
  const retryAfterMs = retryAfterFromBody(info.json);
  return {
    ...(message === undefined ? {} : { message }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(isGlobalRateLimit(info) ? { accountWide: true } : {}),
  };
}

export const DISCORD_ERRORS: PlatformErrorReading = {
  codeOf: (json) => {
    const code = ErrorBodySchema.safeParse(json).data?.code;
    return code === undefined || code === 0 ? undefined : String(code);
  },
};

function header(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The wait a successful answer announces: its route bucket has no request left
 * (`X-RateLimit-Remaining: 0`) until `X-RateLimit-Reset-After` seconds have passed.
 */
export function bucketCooldownMs(headers: ResponseHeaders): number | undefined {
  if (header(headers, "x-ratelimit-remaining")?.trim() !== "0") return undefined;
  const seconds = Number(header(headers, "x-ratelimit-reset-after"));
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds * 1000) : undefined;
}

/** One bot's REST calls. Failures are ChannelErrors; an abort is the caller's AbortError. */
export class DiscordApi {
  constructor(private readonly http: HttpClient) {}

  async createMessage(channelId: string, body: CreateMessageBody, files: readonly UploadFile[], signal: AbortSignal): Promise<CreatedMessage> {
    const path = `channels/${encodeURIComponent(channelId)}/messages`;
    const request = files.length === 0 ? { json: body } : { multipart: multipartOf(body, files) };
    const res = await this.call(() => this.http.requestJson({ method: "POST", path, ...request, signal, parse: MessageSchema.parse }));
    const cooldownMs = bucketCooldownMs(res.headers);
    return { id: res.data.id, ...(cooldownMs === undefined ? {} : { cooldownMs }) };
  }

  /** The DM channel with a user (Discord answers the existing one when there is one). */
  async openDm(userId: string, signal: AbortSignal): Promise<string> {
    const res = await this.call(() =>
      this.http.requestJson({ method: "POST", path: "users/@me/channels", json: { recipient_id: userId }, signal, parse: ChannelSchema.parse }),
    );
    return res.data.id;
  }

  /** A channel's type and parent (a thread's parent is the channel it hangs off). */
  async channel(channelId: string, signal: AbortSignal): Promise<DiscordChannelInfo> {
    const path = `channels/${encodeURIComponent(channelId)}`;
    return (await this.call(() => this.http.requestJson({ path, signal, parse: ChannelInfoSchema.parse }))).data;
  }

  /** Shows "typing…" in a channel for about 10 s, or until the bot posts there. */
  async typing(channelId: string, signal: AbortSignal): Promise<void> {
    const path = `channels/${encodeURIComponent(channelId)}/typing`;
    await this.call(() => this.http.requestJson({ method: "POST", path, signal }));
  }

  async me(signal: AbortSignal): Promise<DiscordUser> {
    const res = await this.call(() => this.http.requestJson({ path: "users/@me", signal, parse: UserSchema.parse }));
    return res.data;
  }

  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      throw channelErrorOf(err, DISCORD_ERRORS);
    }
  }
}

/** Uploads go as `files[n]` parts, the message as `payload_json` naming them in `attachments`. */
function multipartOf(body: CreateMessageBody, files: readonly UploadFile[]): FormData {
  const form = new FormData();
  form.set("payload_json", JSON.stringify({ ...body, attachments: files.map((file, id) => ({ id, filename: file.filename })) }));
  files.forEach((file, i) => form.set(`files[${i}]`, new Blob([file.data], { type: file.contentType }), file.filename));
  return form;
}
