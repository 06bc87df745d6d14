/**
 * Discord (REST API v10): text, uploads and native polls into guild channels, threads and DMs.
 * A thread is a channel of its own, so a threadId is where the message is posted; in a DM, which
 * has no threads, the threadId is the message the reply quotes.
 */
import { createHash } from "node:crypto";
import {
  type ChannelAdapter,
  ChannelError,
  type ChannelProbe,
  type ChannelInbound,
  type ChannelPolls,
  type ChannelReceiver,
  type ChannelTyping,
  definePlugin,
  type DeliveryReceipt,
  type OutboundMessage,
  type OutboundPoll,
  receiptOf,
} from "@gw/channels";
import type { HttpClient } from "@gw/http-client";
import type { PluginContext } from "../registry.js";
import { type CreateMessageBody, DISCORD_CODES, DISCORD_USER_AGENT, DiscordApi, readDiscordError, type UploadFile } from "./api.js";
import { urlFiles } from "../inbound-files.js";
import { downloadAttachments } from "./attachments.js";
import { DiscordGatewayReceiver } from "./gateway/receiver.js";
import { type DiscordRecipient, formatDiscordRecipient, parseDiscordRecipient } from "./recipient.js";
import { type DiscordSettings, DiscordSettingsSchema } from "./settings.js";

export const DISCORD_TEXT_LIMIT = 2000;
/** Discord takes at most 10 attachments in one message. */
export const DISCORD_FILES_PER_MESSAGE = 10;
/** Discord's poll limits: question, answer count, answer length. */
export const DISCORD_POLL_LIMITS = { question: 300, answers: 10, answer: 55 } as const;
/** Discord's own default; the port has no duration. */
export const DISCORD_POLL_HOURS = 24;
/** DM channels of users written to recently (a DM channel never changes for a bot and a user). */
const DM_CACHE_SIZE = 1_000;
const NONCE_LENGTH = 25;

/** Discord's nonce is at most 25 characters: a digest of the part's idempotency key. */
export function discordNonce(idempotencyKey: string): string {
  return createHash("sha256").update(idempotencyKey).digest("base64url").slice(0, NONCE_LENGTH);
}

export function discordPollOf(poll: OutboundPoll): CreateMessageBody["poll"] {
  const { question, answers, answer } = DISCORD_POLL_LIMITS;
  const reason =
    poll.question.length < 1 || poll.question.length > question
      ? `a Discord poll question has 1-${question} characters`
      : poll.options.length < 1 || poll.options.length > answers
        ? `a Discord poll has 1-${answers} answers, not ${poll.options.length}`
        : poll.options.some((o) => o.length < 1 || o.length > answer)
          ? `each Discord poll answer has 1-${answer} characters`
          : undefined;
  if (reason !== undefined) throw new ChannelError("rejected", reason);
  return {
    question: { text: poll.question },
    answers: poll.options.map((text) => ({ poll_media: { text } })),
    allow_multiselect: poll.allowMultipleAnswers,
    duration: DISCORD_POLL_HOURS,
  };
}

type MessageContent = Pick<CreateMessageBody, "content" | "poll">;

export class DiscordAdapter implements ChannelAdapter {
  readonly limits = { textChunk: DISCORD_TEXT_LIMIT, mediaPerMessage: DISCORD_FILES_PER_MESSAGE };
  readonly polls: ChannelPolls = { send: (poll, signal) => this.sendPoll(poll, signal) };
  readonly typing: ChannelTyping = { show: (chat, threadId, signal) => this.showTyping(chat, threadId, signal) };
  readonly inbound?: ChannelInbound;
  private readonly dms = new Map<string, string>();

  constructor(
    private readonly api: DiscordApi,
    private readonly media: HttpClient,
    /** The Gateway connection, unless the account's `inbound` is "off". */
    receiver?: ChannelReceiver,
  ) {
    // Attachments come as CDN URLs that need no token: read through the media client (inbound-files.ts).
    if (receiver !== undefined) this.inbound = { receiver, files: urlFiles(media) };
  }

  validateRecipient(to: string): string {
    return formatDiscordRecipient(parseDiscordRecipient(to));
  }

  async send(msg: OutboundMessage, signal: AbortSignal): Promise<DeliveryReceipt> {
    const recipient = parseDiscordRecipient(msg.to);
    const files = msg.mediaUrls.length === 0 ? [] : await downloadAttachments(this.media, msg.mediaUrls, signal);
    return this.post(recipient, msg, { ...(msg.text === undefined || msg.text === "" ? {} : { content: msg.text }) }, files, signal);
  }

  private async sendPoll(poll: OutboundPoll, signal: AbortSignal): Promise<DeliveryReceipt> {
    const recipient = parseDiscordRecipient(poll.to);
    if (poll.anonymous) throw new ChannelError("unsupported", "Discord polls always show who voted; an anonymous poll cannot be sent");
    return this.post(recipient, poll, { poll: discordPollOf(poll) }, [], signal);
  }

  /** In the thread, the channel, or the user's DM (opened once, then cached). */
  private async showTyping(chat: string, threadId: string | undefined, signal: AbortSignal): Promise<void> {
    const recipient = parseDiscordRecipient(chat);
    const channelId = recipient.kind === "user" ? await this.dmChannel(recipient, signal) : (threadId ?? recipient.id);
    await this.api.typing(channelId, signal);
  }

  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    const me = await this.api.me(signal);
    const tag = me.discriminator !== undefined && me.discriminator !== "0" ? `#${me.discriminator}` : "";
    return { reachable: true, identity: `${me.username}${tag}` };
  }

  /**
   * Posts into the recipient's channel, its thread, or the user's DM. A bare id is a channel
   * id; when Discord does not know that channel, the id is tried once as a user (DESIGN §7).
   */
  private async post(
    recipient: DiscordRecipient,
    part: { threadId?: string; idempotencyKey: string },
    content: MessageContent,
    files: readonly UploadFile[],
    signal: AbortSignal,
  ): Promise<DeliveryReceipt> {
    const base = { ...content, allowed_mentions: { parse: ["users" as const] }, nonce: discordNonce(part.idempotencyKey), enforce_nonce: true as const };
    if (recipient.kind !== "user") {
      try {
        return await this.create(part.threadId ?? recipient.id, base, files, signal);
      } catch (err) {
        const unknownChannel = err instanceof ChannelError && err.platformCode === DISCORD_CODES.unknownChannel;
        if (recipient.kind === "channel" || !unknownChannel) throw err;
      }
    }
    const dm = await this.dmChannel(recipient, signal);
    const reply = part.threadId === undefined ? {} : { message_reference: { message_id: part.threadId, fail_if_not_exists: false } };
    return this.create(dm, { ...base, ...reply }, files, signal);
  }

  private async create(channelId: string, body: CreateMessageBody, files: readonly UploadFile[], signal: AbortSignal): Promise<DeliveryReceipt> {
    const created = await this.api.createMessage(channelId, body, files, signal);
    return { ...receiptOf([created.id]), ...(created.cooldownMs === undefined ? {} : { cooldownMs: created.cooldownMs }) };
  }

  private async dmChannel(recipient: DiscordRecipient, signal: AbortSignal): Promise<string> {
    const cached = this.dms.get(recipient.id);
    if (cached !== undefined) return cached;
    let channelId: string;
    try {
      channelId = await this.api.openDm(recipient.id, signal);
    } catch (err) {
      // A bare id that is neither a channel nor a user: say both, not only "Unknown User".
      if (recipient.kind === "bare" && err instanceof ChannelError && err.platformCode === DISCORD_CODES.unknownUser) {
        throw new ChannelError("rejected", `Discord knows no channel and no user ${recipient.id}: ${err.message}`, {
          status: err.status,
          platformCode: DISCORD_CODES.unknownChannel,
          cause: err,
        });
      }
      throw err;
    }
    if (this.dms.size >= DM_CACHE_SIZE) this.dms.delete(this.dms.keys().next().value!);
    this.dms.set(recipient.id, channelId);
    return channelId;
  }
}

/**
 * Discord allows a bot 50 requests a second (global); the per-route buckets come from the
 * X-RateLimit-* headers of each answer, which the adapter reports as cooldowns.
 */
export const discordPlugin = definePlugin({
  kind: "discord",
  title: "Discord",
  settings: DiscordSettingsSchema,
  rates: [{ name: "global", scope: "account", max: 50, windowMs: 1_000 }],
  create: ({ settings, http }: PluginContext<DiscordSettings>) => {
    const api = new DiscordApi(
      http({
        name: "discord",
        baseUrl: settings.apiBaseUrl,
        headers: { authorization: `Bot ${settings.botToken}`, "user-agent": DISCORD_USER_AGENT },
        secrets: [settings.botToken],
        errorBody: readDiscordError,
      }),
    );
    // Media URLs come from callers: a client without the bot's credentials and without a base
    // URL, so every download is SSRF-guarded and none can reach the API with the token.
    const media = http({ name: "discord media", secrets: [settings.botToken] });
    const receiver =
      settings.inbound === "gateway"
        ? new DiscordGatewayReceiver({ gatewayUrl: settings.gatewayUrl, token: settings.botToken }, { me: (signal) => api.me(signal), channel: (id, signal) => api.channel(id, signal) })
        : undefined;
    return new DiscordAdapter(api, media, receiver);
  },
});
