/**
 * Slack's Events API (https://api.slack.com/apis/events-api): signed POSTs at
 * `/api/chatapp/events` (or the channel's webhook route). Every request is checked with the app's
 * signing secret: `X-Slack-Signature` is `v0=` + HMAC-SHA256 of `v0:<timestamp>:<raw body>`, and
 * `X-Slack-Request-Timestamp` must be within five minutes, so a captured request cannot be replayed
 * later. https://api.slack.com/authentication/verifying-requests-from-slack
 */
import type { InboundEndpoint, InboundMessage, InboundResult, RawInbound } from "@gw/channels";
import { z } from "zod";
import { inboundAttachment } from "../inbound-attachment.js";
import { accepted, hmacHex, jsonBody, jsonReply, refused, sameSecret, WEBHOOK_PATH } from "../webhook-helpers.js";

/** Slack's replay window for signed requests. */
export const SLACK_SIGNATURE_WINDOW_SECONDS = 300;

/** A message or app_mention event: the only events read beyond their type. */
const MessageEventSchema = z.object({
  type: z.enum(["message", "app_mention"]),
  subtype: z.string().optional(),
  channel: z.string().optional(),
  channel_type: z.string().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  ts: z.string().optional(),
  thread_ts: z.string().optional(),
  files: z
    .array(
      z.object({
        id: z.string(),
        name: z.string().nullish(),
        mimetype: z.string().nullish(),
        size: z.number().int().nullish(),
        url_private: z.string().nullish(),
      }),
    )
    .optional(),
});

const EnvelopeSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("url_verification"), challenge: z.string() }),
  z.object({
    type: z.literal("event_callback"),
    event_id: z.string(),
    // Only the type: other events shape their fields their own way (channel_created's `channel`
    // and user_change's `user` are objects), and refusing them makes Slack retry, then disable.
    event: z.object({ type: z.string() }).loose(),
    authorizations: z.array(z.object({ user_id: z.string() })).optional(),
  }),
  z.object({ type: z.literal("app_rate_limited") }),
]);

/** Message subtypes that are a person writing; the rest are edits, deletions, joins... */
const WRITTEN = new Set([undefined, "file_share", "thread_broadcast", "bot_message", "me_message"]);

/** Whether the request carries a valid, fresh signature of its raw body. */
export function slackSignatureValid(req: RawInbound, signingSecret: string, nowMs: number): boolean {
  const timestamp = req.headers["x-slack-request-timestamp"];
  const signature = req.headers["x-slack-signature"];
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_SIGNATURE_WINDOW_SECONDS) return false;
  return sameSecret(signature, `v0=${hmacHex(signingSecret, `v0:${timestamp}:`, req.body)}`);
}

/**
 * One event as an InboundMessage, or undefined for what is not a message someone wrote. The
 * event id is the message's `<channel>:<ts>`, not Slack's event_id: a mention in a channel
 * arrives both as `message` and as `app_mention`, two events of one message, answered once.
 */
export function slackMessage(event: z.output<typeof MessageEventSchema>, botUserId: string | undefined): InboundMessage | undefined {
  if (!WRITTEN.has(event.subtype) || event.channel === undefined || event.ts === undefined) return undefined;
  const raw = event.text ?? "";
  const mention = botUserId === undefined ? undefined : new RegExp(`<@${botUserId}(\\|[^>]*)?>`, "g");
  const direct = event.channel_type === "im" || event.channel.startsWith("D");
  return {
    eventId: `${event.channel}:${event.ts}`,
    chat: event.channel,
    ...(event.thread_ts === undefined ? {} : { threadId: event.thread_ts }),
    sender: event.user ?? event.bot_id ?? "unknown",
    chatType: direct ? "direct" : "group",
    mentioned: event.type === "app_mention" || (botUserId !== undefined && raw.includes(`<@${botUserId}`)),
    fromBot: event.bot_id !== undefined || event.subtype === "bot_message" || (botUserId !== undefined && event.user === botUserId),
    text: (mention === undefined ? raw : raw.replace(mention, "")).replace(/\s{2,}/g, " ").trim(),
    // `url_private` needs the bot token to download; the URL itself holds none.
    ...(event.files === undefined || event.files.length === 0
      ? {}
      : { attachments: event.files.map((f) => inboundAttachment({ name: f.name, mimeType: f.mimetype, size: f.size, url: f.url_private, id: f.id })) }),
    sentAt: Math.round(Number(event.ts) * 1000),
  };
}

/**
 * One Slack app's Events API endpoint. A request with a missing, wrong or stale signature gets
 * 401 and stores nothing; `url_verification` answers its challenge. Slack retries an event
 * (with `X-Slack-Retry-Num`) when it got no 2xx within 3 s; the event's message keeps its id, so
 * the store takes a retry once.
 */
export class SlackEvents implements InboundEndpoint {
  constructor(
    private readonly signingSecret: string,
    private readonly now: () => number = Date.now,
  ) {}

  async handle(req: RawInbound): Promise<InboundResult> {
    if (req.path !== "/" && req.path !== WEBHOOK_PATH) return refused(404, `no Slack endpoint at ${req.path}`);
    if (req.method !== "POST") return refused(405, "Slack events are POST requests");
    if (!slackSignatureValid(req, this.signingSecret, this.now())) return refused(401, "missing, wrong or stale Slack signature");
    const envelope = EnvelopeSchema.safeParse(jsonBody(req));
    if (!envelope.success) return refused(400, "the body is not a Slack Events API request");
    const body = envelope.data;
    if (body.type === "url_verification") return { reply: jsonReply(200, { challenge: body.challenge }), messages: [] };
    if (body.type !== "event_callback") return accepted([]);
    // Any other event is acknowledged and stored nowhere; so is a message event we cannot read,
    // since Slack would send the same bytes again.
    const event = MessageEventSchema.safeParse(body.event);
    const message = event.success ? slackMessage(event.data, body.authorizations?.[0]?.user_id) : undefined;
    return accepted(message === undefined ? [] : [message]);
  }
}
