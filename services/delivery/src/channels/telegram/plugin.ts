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
  type ChannelProbe,
  type ChannelReceiver,
  type DeliveryReceipt,
  type InboundEndpoint,
  type OutboundMessage,
  type OutboundPoll,
  receiptOf,
  type TelegramSettings,
} from "@gw/channels";
import { HttpError } from "@gw/http-client";
import { z } from "zod";
import { channelErrorFromHttp } from "../http-channel-error.js";
import { definePlugin } from "../registry.js";
import { MessageSchema, TelegramApi, type TelegramMessage, type TelegramUpload, UserSchema } from "./api.js";
import { type TelegramBotIdentity, TelegramWebhook } from "./inbound.js";
import { fileNameOf, kindFromContentType, kindFromUrl, planAlbums, sendableByUrl, type TelegramMedium } from "./media.js";
import { TelegramReceiver } from "./receiver.js";

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
  readonly limits = { textChunk: TELEGRAM_TEXT_CHUNK, polls: true, mediaPerMessage: 10 };
  readonly inbound?: InboundEndpoint;
  private readonly botId: number;
  private username: Promise<string | undefined> | undefined;

  constructor(
    private readonly api: TelegramApi,
    settings: Pick<TelegramSettings, "botToken" | "inbound" | "webhookSecret">,
    /** Long polling, when the account's `inbound` is "polling". */
    readonly receiver?: ChannelReceiver,
  ) {
    this.botId = Number(settings.botToken.split(":")[0]);
    const secret = webhookSecretOf(settings);
    if (secret !== undefined) this.inbound = new TelegramWebhook(secret, this.botId, () => this.identity());
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

  /** sendChatAction "typing": shown for 5 s or until the bot's next message. */
  async typing(chat: string, threadId: string | undefined, signal: AbortSignal): Promise<void> {
    await this.api.call("sendChatAction", { ...this.target(chat, threadId), action: "typing" }, z.boolean(), signal);
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

  async sendPoll(poll: OutboundPoll, signal: AbortSignal): Promise<DeliveryReceipt> {
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

  async status(signal: AbortSignal): Promise<ChannelProbe> {
    try {
      const me = await this.api.call("getMe", {}, UserSchema, signal);
      return { reachable: true, identity: me.username === undefined ? String(me.id) : `@${me.username}` };
    } catch (err) {
      if (err instanceof ChannelError) return { reachable: false, error: err.message };
      throw err;
    }
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

export const telegramPlugin = definePlugin({
  kind: "telegram",
  create: ({ settings, http }) => {
    const api = TelegramApi.create(settings, http);
    return new TelegramAdapter(api, settings, settings.inbound === "polling" ? new TelegramReceiver(api) : undefined);
  },
});
