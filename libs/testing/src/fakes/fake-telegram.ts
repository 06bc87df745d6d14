/**
 * Telegram Bot API (https://core.telegram.org/bots/api): `POST /bot<token>/<method>` with
 * parameters in the query, a JSON body, a form or multipart (uploads, and JSON-serialised
 * objects as string fields). Answers `{ ok: true, result }` or
 * `{ ok: false, error_code, description, parameters? }`, with Telegram's own texts.
 */
import { STATUS_CODES } from "node:http";
import {
  bodyFields,
  type FakeMedia,
  type FakePoll,
  type FakeReply,
  type FakeRequest,
  isFakeFile,
  type PlatformContext,
  type PlatformFake,
  startPlatformFake,
} from "./platform-fake.js";
import { TelegramFiles } from "./fake-telegram-files.js";
import { type PollStats, type TelegramUpdate, TelegramUpdates, UPDATE_METHODS, type UserMessage } from "./fake-telegram-updates.js";

export const TELEGRAM_TEXT_LIMIT = 4096;
export const TELEGRAM_CAPTION_LIMIT = 1024;

export interface FakeTelegramBot {
  /** `<bot id>:<secret>`, as BotFather issues them. */
  token: string;
  username: string;
}

export interface FakeTelegramChat {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  /** Public chats can be addressed as `@username`. */
  username?: string;
  title?: string;
  /** Forum supergroups have topics, addressed with `message_thread_id`. */
  isForum?: boolean;
}

export interface FakeTelegram extends PlatformFake {
  readonly bots: readonly FakeTelegramBot[];
  readonly chats: readonly FakeTelegramChat[];
  /** A person writes to a bot: the update getUpdates hands out (fake-telegram-updates.ts). */
  userWrites(msg: UserMessage): TelegramUpdate;
  /** Queues any update for a bot (default: the first); its update_id is assigned. */
  queueUpdate(update: Omit<TelegramUpdate, "update_id">, botToken?: string): TelegramUpdate;
  /** How a bot's getUpdates were called: offsets, conflicts, pollers at once. */
  pollStats(botToken?: string): PollStats;
  /** The webhook a bot has set, if any. */
  webhookOf(botToken?: string): { url: string; secretToken?: string } | undefined;
  /** Every file path downloaded from the fake's file server, in order. */
  readonly fileDownloads: readonly string[];
}

export const DEFAULT_TELEGRAM_BOTS: readonly FakeTelegramBot[] = [
  { token: "100001:AAfake-telegram-token-one", username: "fake_one_bot" },
  { token: "100002:AAfake-telegram-token-two", username: "fake_two_bot" },
];

export const DEFAULT_TELEGRAM_CHATS: readonly FakeTelegramChat[] = [
  { id: 4242, type: "private" },
  { id: -1001234567890, type: "supergroup", title: "Fake forum", username: "fakeforum", isForum: true },
];

type Params = Record<string, unknown>;
type Bot = FakeTelegramBot & { id: number };

const MEDIA_METHODS: Record<string, string> = {
  sendphoto: "photo",
  senddocument: "document",
  sendanimation: "animation",
  sendvideo: "video",
  sendaudio: "audio",
};

export async function startFakeTelegram(
  opts: { bots?: readonly FakeTelegramBot[]; chats?: readonly FakeTelegramChat[] } = {},
): Promise<FakeTelegram> {
  const bots: Bot[] = (opts.bots ?? DEFAULT_TELEGRAM_BOTS).map((bot) => ({ ...bot, id: Number(bot.token.split(":")[0]) }));
  const chats = [...(opts.chats ?? DEFAULT_TELEGRAM_CHATS)];
  const nextId = new Map<number, number>();
  const messageId = (chat: FakeTelegramChat) => {
    const id = (nextId.get(chat.id) ?? 100) + 1;
    nextId.set(chat.id, id);
    return id;
  };

  const files = new TelegramFiles();
  const updates = new TelegramUpdates(bots, files);
  const route = (req: FakeRequest, ctx: PlatformContext): FakeReply | Promise<FakeReply> => {
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(req.path);
    if (download !== null) return bots.some((b) => b.token === decodeURIComponent(download[1]!)) ? files.download(download[2]!) : fail(401, "Unauthorized");
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.path);
    if (match === null) return fail(404, "Not Found");
    const bot = bots.find((b) => b.token === decodeURIComponent(match[1]!));
    if (bot === undefined) return fail(401, "Unauthorized");
    const method = match[2]!.toLowerCase();
    const params: Params = { ...req.query, ...bodyFields(req) };
    if (method === "getme") return ok(user(bot));
    if (method === "getfile") return files.getFile(params.file_id);
    if (UPDATE_METHODS.has(method)) return updates.route(bot.token, method, params, req);
    if (method === "sendchataction") return sendChatAction(chats, params);
    const known = method === "sendmessage" || method === "sendmediagroup" || method === "sendpoll" || method in MEDIA_METHODS;
    if (!known) return fail(404, "Not Found");
    const target = findChat(chats, params.chat_id);
    if (typeof target === "string") return fail(400, target);
    const thread = threadOf(target, params.message_thread_id);
    if (thread instanceof Error) return fail(400, thread.message);
    const send: Send = { bot, chat: target, thread, params, req, ctx, messageId };
    if (method === "sendmessage") return sendMessage(send);
    if (method === "sendpoll") return sendPoll(send);
    if (method === "sendmediagroup") return sendMediaGroup(send);
    return sendMedia(send, MEDIA_METHODS[method]!);
  };

  const fake = await startPlatformFake({
    tellsRetryAfter: true,
    dedupesOnClientKey: false,
    wire: {
      route,
      reject: (step) => {
        const status = step.status ?? 400;
        const fallback = status === 403 ? "Forbidden: bot was blocked by the user" : "Bad Request: chat not found";
        return fail(status, step.reason ?? fallback);
      },
      rateLimit: ({ retryAfterSeconds }) =>
        fail(429, `Too Many Requests: retry after ${retryAfterSeconds}`, { retry_after: retryAfterSeconds }),
      unavailable: ({ status = 502 }) => (status === 500 ? fail(500, "Internal Server Error") : proxyPage(status)),
    },
  });
  const token = (given?: string) => given ?? bots[0]!.token;
  return Object.assign(fake, {
    bots,
    chats,
    userWrites: (msg: UserMessage) => updates.userWrites(msg),
    queueUpdate: (update: Omit<TelegramUpdate, "update_id">, botToken?: string) => updates.queue(token(botToken), update),
    pollStats: (botToken?: string) => updates.stats(token(botToken)),
    webhookOf: (botToken?: string) => updates.webhook(token(botToken)),
    fileDownloads: files.downloads,
  });
}

const CHAT_ACTIONS = ["typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice", "upload_document", "choose_sticker", "find_location", "record_video_note", "upload_video_note"];

/** "typing…" and the like: shown for 5 s; the fake only checks and records the request. */
function sendChatAction(chats: readonly FakeTelegramChat[], params: Params): FakeReply {
  const target = findChat(chats, params.chat_id);
  if (typeof target === "string") return fail(400, target);
  const thread = threadOf(target, params.message_thread_id);
  if (thread instanceof Error) return fail(400, thread.message);
  if (!CHAT_ACTIONS.includes(str(params.action) ?? "")) return fail(400, "Bad Request: wrong parameter action in request");
  return ok(true);
}

interface Send {
  bot: Bot;
  chat: FakeTelegramChat;
  thread: number | undefined;
  params: Params;
  req: FakeRequest;
  ctx: PlatformContext;
  messageId(chat: FakeTelegramChat): number;
}

function sendMessage(s: Send): FakeReply {
  const text = str(s.params.text);
  if (text === undefined || text.trim() === "") return fail(400, "Bad Request: message text is empty");
  if (visibleLength(text, str(s.params.parse_mode)) > TELEGRAM_TEXT_LIMIT) return fail(400, "Bad Request: message is too long");
  const message = base(s);
  deliver(s, message.message_id, { text, media: [] });
  return ok({ ...message, text });
}

function sendMedia(s: Send, kind: string): FakeReply {
  const media = mediaOf(s.params[kind], s.params, kind);
  if (media === undefined) return fail(400, `Bad Request: there is no ${kind} in the request`);
  if (typeof media === "string") return fail(400, media);
  const caption = str(s.params.caption);
  if (caption !== undefined && visibleLength(caption, str(s.params.parse_mode)) > TELEGRAM_CAPTION_LIMIT) {
    return fail(400, "Bad Request: message caption is too long");
  }
  const message = base(s);
  deliver(s, message.message_id, { text: caption, media: [media] });
  return ok({ ...message, ...mediaResult(kind, message.message_id), ...(caption === undefined ? {} : { caption }) });
}

function sendMediaGroup(s: Send): FakeReply {
  const items = json(s.params.media);
  if (items === undefined) return fail(400, 'Bad Request: parameter "media" is required');
  if (!Array.isArray(items)) return fail(400, "Bad Request: can't parse media JSON object");
  if (items.length < 2 || items.length > 10) return fail(400, "Bad Request: media group must contain 2-10 items");
  const types = items.map((item) => String((item as Params)?.type));
  for (const solo of ["document", "audio"]) {
    if (types.includes(solo) && types.some((type) => type !== solo)) {
      return fail(400, `Bad Request: ${solo} can't be mixed with other media types`);
    }
  }
  const resolved: Array<{ kind: string; media: FakeMedia; caption?: string }> = [];
  for (const item of items as Params[]) {
    const kind = String(item.type);
    if (!["photo", "video", "document", "audio"].includes(kind)) return fail(400, "Bad Request: can't parse InputMedia: unsupported type");
    const media = mediaOf(item.media, s.params, kind);
    if (media === undefined || typeof media === "string") return fail(400, "Bad Request: can't parse InputMedia: media not found");
    const caption = str(item.caption);
    if (caption !== undefined && caption.length > TELEGRAM_CAPTION_LIMIT) return fail(400, "Bad Request: message caption is too long");
    resolved.push({ kind, media, caption });
  }
  const groupId = String(Date.now());
  const messages = resolved.map(({ kind, media, caption }) => {
    const message = base(s);
    deliver(s, message.message_id, { text: caption, media: [media] });
    return { ...message, media_group_id: groupId, ...mediaResult(kind, message.message_id), ...(caption === undefined ? {} : { caption }) };
  });
  return ok(messages);
}

function sendPoll(s: Send): FakeReply {
  const question = str(s.params.question);
  if (question === undefined || question.trim() === "") return fail(400, "Bad Request: poll question must be non-empty");
  if (question.length > 300) return fail(400, "Bad Request: poll question length must not exceed 300");
  const raw = json(s.params.options);
  if (!Array.isArray(raw)) return fail(400, "Bad Request: can't parse options JSON object");
  const options = raw.map((option) => (typeof option === "string" ? option : str((option as Params)?.text) ?? ""));
  if (options.length < 2) return fail(400, "Bad Request: poll must have at least 2 option");
  if (options.length > 10) return fail(400, "Bad Request: poll can't have more than 10 options");
  if (options.some((option) => option.trim() === "" || option.length > 100)) return fail(400, "Bad Request: poll options length must not exceed 100");
  const anonymous = bool(s.params.is_anonymous) ?? true;
  const multiple = bool(s.params.allows_multiple_answers) ?? false;
  const message = base(s);
  deliver(s, message.message_id, { media: [], poll: { question, options, allowMultipleAnswers: multiple, anonymous } });
  const poll = {
    id: `${s.chat.id}${message.message_id}`,
    question,
    options: options.map((text) => ({ text, voter_count: 0 })),
    total_voter_count: 0,
    is_closed: false,
    is_anonymous: anonymous,
    type: "regular",
    allows_multiple_answers: multiple,
  };
  return ok({ ...message, poll });
}

function deliver(s: Send, id: number, content: { text?: string; media: FakeMedia[]; poll?: FakePoll }): void {
  s.ctx.deliver({
    id: String(id),
    account: String(s.bot.id),
    chat: String(s.chat.id),
    ...content,
    ...(s.thread === undefined ? {} : { threadId: String(s.thread) }),
  });
}

function base(s: Send) {
  const chat = s.chat;
  return {
    message_id: s.messageId(chat),
    from: user(s.bot),
    chat: { id: chat.id, type: chat.type, ...(chat.title ? { title: chat.title } : {}), ...(chat.username ? { username: chat.username } : {}), ...(chat.isForum ? { is_forum: true } : {}) },
    date: Math.floor(Date.now() / 1000),
    ...(s.thread === undefined ? {} : { message_thread_id: s.thread, is_topic_message: true }),
  };
}

function user(bot: Bot) {
  return { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false };
}

function findChat(chats: readonly FakeTelegramChat[], chatId: unknown): FakeTelegramChat | string {
  const key = typeof chatId === "number" ? String(chatId) : str(chatId);
  if (key === undefined || key === "") return "Bad Request: chat_id is empty";
  const chat = key.startsWith("@")
    ? chats.find((c) => c.username?.toLowerCase() === key.slice(1).toLowerCase())
    : chats.find((c) => String(c.id) === key);
  return chat ?? "Bad Request: chat not found";
}

function threadOf(chat: FakeTelegramChat, value: unknown): number | undefined | Error {
  if (value === undefined || value === "") return undefined;
  const thread = Number(value);
  if (!Number.isInteger(thread)) return new Error("Bad Request: invalid message_thread_id specified");
  if (!chat.isForum) return new Error("Bad Request: message thread not found");
  return thread;
}

/** A URL Telegram fetches, an uploaded file, or `attach://<field>` naming one. */
function mediaOf(value: unknown, params: Params, kind: string): FakeMedia | string | undefined {
  if (value === undefined || value === "") return undefined;
  if (isFakeFile(value)) return { data: value.data, filename: value.filename, contentType: value.contentType, kind };
  const ref = str(value);
  if (ref === undefined) return "Bad Request: wrong file identifier/HTTP URL specified";
  if (ref.startsWith("attach://")) {
    const file = params[ref.slice("attach://".length)];
    return isFakeFile(file) ? { data: file.data, filename: file.filename, contentType: file.contentType, kind } : undefined;
  }
  if (/^https?:\/\//i.test(ref)) return { url: ref, kind };
  return "Bad Request: wrong file identifier/HTTP URL specified";
}

function mediaResult(kind: string, id: number): Record<string, unknown> {
  const file = { file_id: `fake-file-${id}`, file_unique_id: `u${id}` };
  if (kind === "photo") return { photo: [{ ...file, width: 90, height: 90, file_size: 1024 }] };
  return { [kind]: { ...file, file_size: 1024 } };
}

/** What Telegram counts: the text after its markup is parsed away. */
function visibleLength(text: string, parseMode: string | undefined): number {
  const mode = parseMode?.toLowerCase();
  if (mode === "html") {
    return text.replace(/<[^>]*>/g, "").replace(/&(lt|gt|amp|quot|#\d+|#x[0-9a-f]+);/gi, "_").length;
  }
  if (mode === "markdownv2" || mode === "markdown") {
    return text.replace(/\]\([^)]*\)/g, "]").replace(/\\(.)/g, "$1").replace(/[*_~`|[\]]/g, "").length;
  }
  return text.length;
}

/** What sits in front of the Bot API answers its other 5xx with an nginx page, not JSON. */
function proxyPage(status: number): FakeReply {
  const title = `${status} ${STATUS_CODES[status] ?? "Error"}`;
  return {
    status,
    headers: { "content-type": "text/html" },
    text: `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n`,
  };
}

function ok(result: unknown): FakeReply {
  return { status: 200, json: { ok: true, result } };
}

function fail(status: number, description: string, parameters?: Record<string, unknown>): FakeReply {
  return { status, json: { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) } };
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined;
}

function bool(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  return undefined;
}

/** Form and multipart posts carry objects as JSON-serialised strings. */
function json(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
