/**
 * Slack Events API requests as Slack sends them (https://api.slack.com/apis/events-api): an
 * `event_callback` envelope around an event (a message, or one of the many others whose fields
 * are objects, such as channel_created and user_change), signed with the app's signing secret
 * (`X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<ts>:<body>">`, `X-Slack-Request-Timestamp`),
 * and `X-Slack-Retry-Num`/`X-Slack-Retry-Reason` on Slack's retries.
 */
import { createHmac } from "node:crypto";

export interface SlackMessageInput {
  channel: string;
  user: string;
  text: string;
  /** The bot user the app is installed as (`authorizations[0].user_id`). */
  botUserId: string;
  /** "message" (default) or "app_mention". */
  type?: "message" | "app_mention";
  /** "im" for a DM (default for D… channels), "channel" otherwise. */
  channelType?: "im" | "channel" | "group" | "mpim";
  /** Default: the next of a counter, as Slack's ts grow. */
  ts?: string;
  threadTs?: string;
  /** Set on messages a bot wrote. */
  botId?: string;
  subtype?: string;
  teamId?: string;
  /** Shared files, as the event lists them (`id`, `name`, `mimetype`, `size`, `url_private`...); subtype file_share. */
  files?: Array<Record<string, unknown>>;
}

let seq = 0;
const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(++seq % 1_000_000).padStart(6, "0")}`;
let eventSeq = 0;

/** The `event_callback` envelope Slack puts around every event of an app's subscription. */
function eventCallback(event: Record<string, unknown>, botUserId: string, team: string): Record<string, unknown> {
  return {
    token: "verification-token-unused",
    team_id: team,
    api_app_id: "A0FAKEAPP",
    event,
    type: "event_callback",
    event_id: `Ev0FAKE${String(++eventSeq).padStart(6, "0")}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: team, user_id: botUserId, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
  };
}

export function slackMessageEvent(input: SlackMessageInput): Record<string, unknown> {
  const team = input.teamId ?? "T0FAKE";
  const type = input.type ?? "message";
  const ts = input.ts ?? nextTs();
  return eventCallback(
    {
      type,
      ...(input.subtype === undefined ? (input.files === undefined ? {} : { subtype: "file_share" }) : { subtype: input.subtype }),
      channel: input.channel,
      ...(type === "message" ? { channel_type: input.channelType ?? (input.channel.startsWith("D") ? "im" : "channel") } : {}),
      user: input.user,
      ...(input.botId === undefined ? {} : { bot_id: input.botId }),
      text: input.text,
      ts,
      ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
      ...(input.files === undefined ? {} : { files: input.files, upload: false }),
      event_ts: ts,
      team,
    },
    input.botUserId,
    team,
  );
}

/** `channel_created` (https://api.slack.com/events/channel_created): `channel` is an object. */
export function slackChannelCreatedEvent(input: { channelId: string; name: string; creator: string; botUserId: string; teamId?: string }): Record<string, unknown> {
  const created = Math.floor(Date.now() / 1000);
  const channel = { id: input.channelId, name: input.name, is_channel: true, created, creator: input.creator, is_shared: false, is_org_shared: false };
  return eventCallback({ type: "channel_created", channel, event_ts: nextTs() }, input.botUserId, input.teamId ?? "T0FAKE");
}

/**
 * `user_change` (https://api.slack.com/events/user_change) or `team_join`
 * (https://api.slack.com/events/team_join): `user` is the whole user object.
 */
export function slackUserEvent(input: { type?: "user_change" | "team_join"; userId: string; name: string; botUserId: string; teamId?: string }): Record<string, unknown> {
  const team = input.teamId ?? "T0FAKE";
  const user = {
    id: input.userId,
    team_id: team,
    name: input.name,
    deleted: false,
    real_name: input.name,
    tz: "Europe/London",
    profile: { real_name: input.name, display_name: input.name, team },
    is_admin: false,
    is_bot: false,
    updated: Math.floor(Date.now() / 1000),
  };
  const event = { type: input.type ?? "user_change", user, cache_ts: Math.floor(Date.now() / 1000), event_ts: nextTs() };
  return eventCallback(event, input.botUserId, team);
}

export function slackUrlVerification(challenge: string): Record<string, unknown> {
  return { token: "verification-token-unused", challenge, type: "url_verification" };
}

export interface SlackSigningOptions {
  /** Unix seconds the request says it was made at; default now. */
  timestamp?: number;
  /** Slack's retry count: set on the 1st, 2nd, 3rd retry. */
  retryNum?: number;
  retryReason?: string;
}

/** The headers and body of a signed Events API request. */
export function signedSlackRequest(payload: Record<string, unknown>, signingSecret: string, opts: SlackSigningOptions = {}): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify(payload);
  const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
  return {
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": signature,
      ...(opts.retryNum === undefined ? {} : { "x-slack-retry-num": String(opts.retryNum), "x-slack-retry-reason": opts.retryReason ?? "http_timeout" }),
    },
    body,
  };
}
