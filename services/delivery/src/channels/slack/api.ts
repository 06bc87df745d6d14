/**
 * The Slack Web API wire client (https://docs.slack.dev/reference/methods): `POST
 * <apiBaseUrl>/<method>` with the bot token as a Bearer header and a JSON body. Slack refuses
 * with HTTP 200 `{ ok: false, error: "<code>" }`; only rate limits change the status (429 with
 * `Retry-After`). Both forms become ChannelErrors here.
 */
import { ChannelError } from "@gw/channels";
import { HttpError, type HttpClient } from "@gw/http-client";
import { z } from "zod";
import { channelErrorFromHttp } from "../http-channel-error.js";
import type { HttpClientFactory } from "../registry.js";
import { type SlackSettings } from "./settings.js";

export const PostMessageSchema = z.object({ channel: z.string(), ts: z.string() });
export const OpenConversationSchema = z.object({ channel: z.object({ id: z.string() }) });
export const AuthTestSchema = z.object({ user: z.string(), user_id: z.string(), team: z.string(), team_id: z.string() });

const RefusalSchema = z.object({ ok: z.literal(false), error: z.string(), needed: z.string().optional() });
type Refusal = z.output<typeof RefusalSchema>;
const EnvelopeSchema = z.union([z.looseObject({ ok: z.literal(true) }), RefusalSchema]);

/** Codes that mean "slow down" or "try again": everything else Slack says is for good. */
const RATE_LIMITED = new Set(["ratelimited", "rate_limited"]);
const TRANSIENT = new Set(["fatal_error", "internal_error", "service_unavailable", "request_timeout"]);

/** What an operator should do about the common refusals. */
const HINTS: Readonly<Record<string, string>> = {
  channel_not_found: "no such channel, or the bot cannot see it",
  not_in_channel: "the bot is not a member of the channel; invite it",
  is_archived: "the channel is archived",
  invalid_auth: "the bot token is not valid; check botToken",
  not_authed: "no bot token was sent; check botToken",
  token_revoked: "the bot token was revoked; check botToken",
  account_inactive: "the bot's workspace or user is deactivated",
  msg_too_long: "the text is too long",
  invalid_blocks: "Slack could not use a block (an image URL it cannot fetch?)",
};

function describe(refusal: Refusal): string {
  const hint = refusal.error === "missing_scope" && refusal.needed ? `the bot token lacks the scope ${refusal.needed}` : HINTS[refusal.error];
  return hint === undefined ? refusal.error : `${refusal.error} (${hint})`;
}

/** Slack's code in an error body, when the body is Slack's JSON. */
function codeOf(err: unknown): string | undefined {
  if (!(err instanceof HttpError) || err.body === undefined) return undefined;
  try {
    const parsed = RefusalSchema.safeParse(JSON.parse(err.body));
    return parsed.success ? parsed.data.error : undefined;
  } catch {
    return undefined;
  }
}

export class SlackApi {
  constructor(readonly http: HttpClient) {}

  static create(settings: SlackSettings, factory: HttpClientFactory): SlackApi {
    return new SlackApi(
      factory({
        name: "slack",
        baseUrl: settings.apiBaseUrl,
        headers: { authorization: `Bearer ${settings.botToken}` },
        secrets: [settings.botToken],
      }),
    );
  }

  /** Calls `method` and returns its answer checked by `result`. Throws ChannelError (or the caller's AbortError). */
  async call<T extends z.ZodType>(method: string, params: Record<string, unknown>, result: T, signal: AbortSignal): Promise<z.output<T>> {
    let answer: z.output<typeof EnvelopeSchema>;
    try {
      const res = await this.http.requestJson({
        method: "POST",
        path: method,
        json: params,
        // Slack warns about JSON without a charset (response_metadata.warnings: missing_charset).
        headers: { "content-type": "application/json; charset=utf-8" },
        signal,
        parse: (data) => EnvelopeSchema.parse(data),
      });
      answer = res.data;
    } catch (err) {
      throw channelErrorFromHttp(err, { platformCode: codeOf(err) });
    }
    if (!answer.ok) throw this.refusal(answer);
    const parsed = result.safeParse(answer);
    if (!parsed.success) throw new ChannelError("unavailable", `slack answered ${method} with an unexpected body: ${parsed.error.message}`);
    return parsed.data;
  }

  /** An `ok: false` answer: its code decides the kind, and the message never holds a credential. */
  private refusal(refusal: Refusal): ChannelError {
    const message = this.http.scrub(`slack refused: ${describe(refusal)}`);
    const opts = { platformCode: this.http.scrub(refusal.error) };
    if (RATE_LIMITED.has(refusal.error)) return new ChannelError("rate_limited", message, opts);
    if (TRANSIENT.has(refusal.error)) return new ChannelError("unavailable", message, opts);
    return new ChannelError("rejected", message, opts);
  }
}
