/**
 * Telegram: one bot account. Text with sendMessage; media by URL with the method its kind
 * needs (media.ts), several media as albums (sendMediaGroup), polls with sendPoll, the
 * thread as a forum topic (`message_thread_id`), status with getMe. Telegram has no client
 * dedupe id, so `idempotencyKey` is not sent (delivery's idempotency window covers repeats).
 * Inbound: webhooks checked with `webhookSecret` (inbound.ts), and "typing…" with sendChatAction.
 */
import {
  type ChannelAdapter,
  ChannelError,
  type ChannelInbound,
  type ChannelPolls,
  type ChannelProbe,
  type ChannelReceiver,
  type ChannelTyping,
  definePlugin,
  type DeliveryReceipt,
  type OutboundMessage,
  type OutboundPoll,
  PER_CHAT_PER_SECOND,
  receiptOf,
} from "@gw/channels";
import { HttpError } from "@gw/http-client";
import { z } from "zod";
import { channelErrorFromHttp } from "../http-channel-error.js";
import type { PluginContext } from "../registry.js";
import { MessageSchema, TelegramApi, type TelegramMessage, type TelegramUpload, UserSchema } from "./api.js";
import { type TelegramBotIdentity, TelegramWebhook } from "./inbound.js";
import { TelegramFiles } from "./inbound-files.js";
import { fileNameOf, kindFromContentType, kindFromUrl, planAlbums, sendableByUrl, type TelegramMedium } from "./media.js";
import { TelegramReceiver } from "./receiver.js";
import { type TelegramSettings, TelegramSettingsSchema } from "./settings.js";

/** sendMessage's limit, in UTF-16 code units after entity parsing (we send plain text). */
export const TELEGRAM_TEXT_CHUNK = 4096;
/** A caption's limit; longer text goes out as its own message after the media. */
export const TELEGRAM_CAPTION_MAX = 1024;
/** The most we download to upload ourselves: Telegram's own cap for files it fetches by URL. */
export const TELEGRAM_UPLOAD_MAX_BYTES = 20 * 1024 * 1024;

/** A chat id (negative for groups and channels) or a public @username of 4-32 characters. */
const CHAT_ID = /^-?[1-9]\d{0,15}$/;
const USERNAME = /^@[A-Za-z][A-Za-z0-9_]{3,31}$/;
const TOPIC_ID = /^[1-9]\d{0,15}$/;

const METHOD: Readonly<Record<TelegramMedium["kind"], string>> = {
  photo: "sendPhoto",
  video: "sendVideo",
  animation: "sendAnimation",
  audio: "sendAudio",
  document: "sendDocument",
};

/** Whether the account takes webhooks: `inbound: "webhook"`, or a webhookSecret with no mode set. */
function webhookSecretOf(settings: Pick<TelegramSettings, "inbound" | "webhookSecret">): string | undefined {
  const mode = settings.inbound ?? (settings.webhookSecret === undefined ? "off" : "webhook");
  return mode === "webhook" ? settings.webhookSecret : undefined;
}

export class TelegramAdapter implements ChannelAdapter {
  readonly limits = { textChunk: TELEGRAM_TEXT_CHUNK, mediaPerMessage: 10 };
  readonly inbound?: ChannelInbound;
  readonly polls: ChannelPolls = { send: (poll, signal) => this.sendPoll(poll, signal) };
  /** sendChatAction "typing": shown for 5 s or until the bot's next message. */
  readonly typing: ChannelTyping = {
    show: async (chat, threadId, signal) => {
      await this.api.call("sendChatAction", { ...this.target(chat, threadId), action: "typing" }, z.boolean(), signal);
    },
  };
  private readonly botId: number;
  private username: Promise<string | undefined> | undefined;

  constructor(
    private readonly api: TelegramApi,
    settings: Pick<TelegramSettings, "apiBaseUrl" | "botToken" | "inbound" | "webhookSecret">,
    /** Long polling, when the account's `inbound` is "polling". */
    receiver?: ChannelReceiver,
  ) {
    this.botId = Number(settings.botToken.split(":")[0]);
    const secret = webhookSecretOf(settings);
    const webhook = secret === undefined ? undefined : new TelegramWebhook(secret, this.botId, () => this.identity());
    // The files people send are fetched with getFile (inbound-files.ts), whichever way they came.
    const files = new TelegramFiles(api, settings);
    if (webhook !== undefined) this.inbound = { webhook, files };
    else if (receiver !== undefined) this.inbound = { receiver, files };
  }

  /** The bot's id (from its token) and @username (getMe, asked once; retried after a failure). */
  async identity(): Promise<TelegramBotIdentity> {
    this.username ??= this.api.call("getMe", {}, UserSchema, AbortSignal.timeout(5_000)).then(
      (me) => me.username,
      () => {
        this.username = undefined;
        return undefined;
      },
    );
    const username = await this.username;
    return { id: this.botId, ...(username === undefined ? {} : { username }) };
  }

  validateRecipient(to: string): string {
    const chat = to.trim();
    if (CHAT_ID.test(chat) || USERNAME.test(chat)) return chat;
    throw new ChannelError(
      "recipient",
      `a Telegram recipient is a numeric chat id (such as -1001234567890) or a public @username, got ${JSON.stringify(to.slice(0, 64))}`,
    );
  }

  async send(msg: OutboundMessage, signal: AbortSignal): Promise<DeliveryReceipt> {
    const target = this.target(msg.to, msg.threadId);
    const text = msg.text !== undefined && msg.text !== "" ? msg.text : undefined;
    if (msg.mediaUrls.length === 0) {
      if (text === undefined) throw new ChannelError("rejected", "nothing to send: no text and no media");
      return receiptOf([await this.sendText(target, text, signal)]);
    }
    const media = await Promise.all(msg.mediaUrls.map((url) => this.resolve(url, msg.gifPlayback, signal)));
    const caption = text !== undefined && text.length <= TELEGRAM_CAPTION_MAX ? text : undefined;
    const ids: string[] = [];
    for (const [i, album] of planAlbums(media).entries()) {
      ids.push(...(await this.sendAlbum(target, album, i === 0 ? caption : undefined, signal)));
    }
    if (text !== undefined && caption === undefined) ids.push(await this.sendText(target, text, signal));
    return receiptOf(ids);
  }

  private async sendPoll(poll: OutboundPoll, signal: AbortSignal): Promise<DeliveryReceipt> {
    const target = this.target(poll.to, poll.threadId);
    const message = await this.api.call(
      "sendPoll",
      {
        ...target,
        question: poll.question,
        options: poll.options.map((text) => ({ text })),
        // Telegram's default is anonymous; say it either way.
        is_anonymous: poll.anonymous,
        allows_multiple_answers: poll.allowMultipleAnswers,
      },
      MessageSchema,
      signal,
    );
    return receiptOf([idOf(message)]);
  }

  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    const me = await this.api.call("getMe", {}, UserSchema, signal);
    return { reachable: true, identity: me.username === undefined ? String(me.id) : `@${me.username}` };
  }

  /** `chat_id` and, for a forum topic, `message_thread_id`. */
  private target(to: string, threadId: string | undefined): Record<string, unknown> {
    const chat = this.validateRecipient(to);
    if (threadId === undefined || threadId === "") return { chat_id: chat };
    if (!TOPIC_ID.test(threadId)) {
      throw new ChannelError("rejected", `a Telegram threadId is a forum topic id (message_thread_id, a positive integer), got ${JSON.stringify(threadId.slice(0, 64))}`);
    }
    return { chat_id: chat, message_thread_id: Number(threadId) };
  }

  private async sendText(target: Record<string, unknown>, text: string, signal: AbortSignal): Promise<string> {
    return idOf(await this.api.call("sendMessage", { ...target, text }, MessageSchema, signal));
  }

  /** By URL when Telegram can fetch it as its kind; otherwise fetched here (SSRF-guarded) and uploaded. */
  private async resolve(url: string, gifPlayback: boolean, signal: AbortSignal): Promise<TelegramMedium> {
    const kind = kindFromUrl(url, gifPlayback);
    if (kind !== undefined && sendableByUrl(kind, url)) return { kind, url };
    let file;
    try {
      file = await this.api.http.download(url, { maxBytes: TELEGRAM_UPLOAD_MAX_BYTES, signal });
    } catch (err) {
      throw mediaError(err, url);
    }
    const header = file.headers["content-type"];
    const contentType = (Array.isArray(header) ? header[0] : header) ?? "application/octet-stream";
    const filename = fileNameOf(url) || "file";
    return { kind: kind ?? kindFromContentType(contentType, gifPlayback), url, upload: { bytes: file.bytes, filename, contentType } };
  }

  /** One medium with its own method, or 2-10 as one sendMediaGroup; the caption on the first. */
  private async sendAlbum(target: Record<string, unknown>, album: TelegramMedium[], caption: string | undefined, signal: AbortSignal): Promise<string[]> {
    const uploads: TelegramUpload[] = [];
    const source = (medium: TelegramMedium, i: number) => {
      if (medium.upload === undefined) return medium.url;
      uploads.push({ field: `file${i}`, ...medium.upload });
      return `attach://file${i}`;
    };
    if (album.length === 1) {
      const medium = album[0]!;
      const params = { ...target, [medium.kind]: source(medium, 0), ...(caption === undefined ? {} : { caption }) };
      return [idOf(await this.api.call(METHOD[medium.kind], params, MessageSchema, signal, uploads))];
    }
    const items = album.map((medium, i) => ({ type: medium.kind, media: source(medium, i), ...(i === 0 && caption !== undefined ? { caption } : {}) }));
    const messages = await this.api.call("sendMediaGroup", { ...target, media: items }, MessageSchema.array(), signal, uploads);
    return messages.map(idOf);
  }
}

function idOf(message: TelegramMessage): string {
  return String(message.message_id);
}

/** A media URL that cannot be fetched: say which, keep the kind (a 404 is for good, a 503 is not). */
function mediaError(err: unknown, url: string): unknown {
  const mapped = channelErrorFromHttp(err);
  if (!(mapped instanceof ChannelError) || !(err instanceof HttpError)) return mapped;
  const message = `cannot fetch the medium ${err.url ?? url} to upload it: ${err.message}`;
  return new ChannelError(mapped.kind, message, { status: mapped.status, retryAfterMs: mapped.retryAfterMs, cause: err });
}

/**
 * Telegram's published limits (core.telegram.org/bots/faq, "broadcasting to users"): about one
 * message a second per chat, 20 a minute per group (negative chat ids), 30 a second per bot.
 */
export const telegramPlugin = definePlugin({
  kind: "telegram",
  title: "Telegram",
  settings: TelegramSettingsSchema,
  rates: [
    PER_CHAT_PER_SECOND,
    { name: "per-group", scope: "chat", max: 20, windowMs: 60_000, appliesTo: (to) => to.startsWith("-") },
    { name: "per-bot", scope: "account", max: 30, windowMs: 1_000 },
  ],
  create: ({ settings, http }: PluginContext<TelegramSettings>) => {
    const api = TelegramApi.create(settings, http);
    return new TelegramAdapter(api, settings, settings.inbound === "polling" ? new TelegramReceiver(api) : undefined);
  },
});
