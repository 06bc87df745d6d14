/**
 * The Telegram Bot API wire client (https://core.telegram.org/bots/api): `POST
 * <apiBaseUrl>/bot<token>/<method>` with JSON parameters, or multipart when a file is uploaded
 * (objects then travel as JSON strings). Every answer is `{ ok: true, result }` or
 * `{ ok: false, error_code, description, parameters? }`; failures become ChannelErrors here.
 */
import { ChannelError } from "@gw/channels";
import { type ErrorBodyHook, type HttpClient, retryAfterFromBody } from "@gw/http-client";
import { z } from "zod";
import { channelErrorFromHttp } from "../http-channel-error.js";
import type { HttpClientFactory } from "../registry.js";
import { type TelegramSettings } from "./settings.js";

export const MessageSchema = z.object({ message_id: z.number().int() });
export type TelegramMessage = z.output<typeof MessageSchema>;

export const UserSchema = z.object({ id: z.number().int(), is_bot: z.boolean(), first_name: z.string(), username: z.string().optional() });

const ErrorParametersSchema = z.object({ retry_after: z.number().optional(), migrate_to_chat_id: z.number().optional() });

const ErrorAnswerSchema = z.object({
  ok: z.literal(false),
  error_code: z.number().int().optional(),
  description: z.string().optional(),
  parameters: ErrorParametersSchema.optional(),
});
type ErrorAnswer = z.output<typeof ErrorAnswerSchema>;

const EnvelopeSchema = z.union([z.object({ ok: z.literal(true), result: z.unknown() }), ErrorAnswerSchema]);

type Answer<R> = { ok: true; result: R } | ErrorAnswer;

/** The envelope, with `result` checked by the method's own schema. */
function parseAnswer<T extends z.ZodType>(data: unknown, result: T): Answer<z.output<T>> {
  const envelope = EnvelopeSchema.parse(data);
  return envelope.ok ? { ok: true, result: result.parse(envelope.result) } : envelope;
}

/** A file to upload in the request (multipart), named in the parameters as `attach://<field>`. */
export interface TelegramUpload {
  field: string;
  bytes: Uint8Array;
  filename: string;
  contentType: string;
}

/** Telegram's `description`, plus where a group that became a supergroup lives now. */
function describe(body: ErrorAnswer): string | undefined {
  const moved = body.parameters?.migrate_to_chat_id;
  if (body.description === undefined) return undefined;
  return moved === undefined ? body.description : `${body.description} (the chat is now ${moved})`;
}

/** Reads Telegram's error body: its description, and `parameters.retry_after` for 429s. */
export const readTelegramError: ErrorBodyHook = ({ json }) => {
  const parsed = ErrorAnswerSchema.safeParse(json);
  if (!parsed.success) return undefined;
  return { message: describe(parsed.data), retryAfterMs: retryAfterFromBody(parsed.data) };
};

/** Multipart fields are strings: numbers and booleans as text, objects as JSON. */
function formOf(params: Record<string, unknown>, uploads: readonly TelegramUpload[]): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    form.append(key, typeof value === "object" ? JSON.stringify(value) : String(value));
  }
  for (const file of uploads) {
    form.append(file.field, new Blob([file.bytes], { type: file.contentType }), file.filename);
  }
  return form;
}

export class TelegramApi {
  constructor(readonly http: HttpClient) {}

  static create(settings: TelegramSettings, factory: HttpClientFactory): TelegramApi {
    return new TelegramApi(
      factory({
        name: "telegram",
        // The token is part of every method's path; the client scrubs it (and `bot<token>`) from errors.
        baseUrl: `${settings.apiBaseUrl}/bot${settings.botToken}`,
        secrets: [settings.botToken],
        errorBody: readTelegramError,
      }),
    );
  }

  /**
   * Calls `method` and returns its `result`. Parameters go as JSON, or as multipart when there
   * are uploads. `timeoutMs` replaces the client's deadline (long polls). Throws ChannelError
   * (or the caller's AbortError).
   */
  async call<T extends z.ZodType>(
    method: string,
    params: Record<string, unknown>,
    result: T,
    signal: AbortSignal,
    uploads: readonly TelegramUpload[] = [],
    timeoutMs?: number,
  ): Promise<z.output<T>> {
    let answer: Answer<z.output<T>>;
    try {
      const body = uploads.length > 0 ? { multipart: formOf(params, uploads) } : { json: params };
      const res = await this.http.requestJson({ method: "POST", path: method, ...body, signal, timeoutMs, parse: (data) => parseAnswer(data, result) });
      answer = res.data;
    } catch (err) {
      throw channelErrorFromHttp(err, { platformCode: telegramCode(err) });
    }
    if (answer.ok) return answer.result;
    throw this.refusal(answer);
  }

  /**
   * The Bot API pairs every `ok: false` with the same HTTP status, so this only runs if a proxy
   * or a future version answers 200 with a refusal: it is judged by `error_code` alike.
   */
  private refusal(body: ErrorAnswer): ChannelError {
    const code = body.error_code ?? 400;
    const message = this.http.scrub(`telegram refused (${code}): ${describe(body) ?? "no description"}`);
    const opts = { status: code, platformCode: String(code) };
    if (code === 429) return new ChannelError("rate_limited", message, { ...opts, retryAfterMs: retryAfterFromBody(body) });
    if (code >= 500) return new ChannelError("unavailable", message, opts);
    return new ChannelError("rejected", message, opts);
  }
}

/** Telegram's error_code is the HTTP status; keep it as the platform code of refusals. */
function telegramCode(err: unknown): string | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === "number" ? String(status) : undefined;
}
