/**
 * The Bot API methods that post to a chat (sendMessage, sendPhoto and the other media,
 * sendMediaGroup, sendPoll, sendChatAction) for fake-telegram.ts: Telegram's checks with its own
 * error texts, the Message objects it answers, and what each delivers to the fake's record.
 */
import { type FakeMedia, type FakePoll, type FakeReply, type FakeRequest, isFakeFile, type PlatformContext } from "./platform-fake.js";
import type { FakeTelegramBot, FakeTelegramChat } from "./fake-telegram.js";
import { formJson } from "./form-json.js";

export const TELEGRAM_TEXT_LIMIT = 4096;
export const TELEGRAM_CAPTION_LIMIT = 1024;

type Params = Record<string, unknown>;
export type Bot = FakeTelegramBot & { id: number };

const MEDIA_METHODS: Record<string, string> = {
  sendphoto: "photo",
  senddocument: "document",
  sendanimation: "animation",
  sendvideo: "video",
  sendaudio: "audio",
};

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

export interface SendRequest {
  bot: Bot;
  chats: readonly FakeTelegramChat[];
  params: Params;
  req: FakeRequest;
  ctx: PlatformContext;
  messageId(chat: FakeTelegramChat): number;
}

interface Send extends Omit<SendRequest, "chats"> {
  chat: FakeTelegramChat;
  thread: number | undefined;
}

/** A send method's answer, or undefined for a method that is not one. */
export function sendMethod(method: string, r: SendRequest): FakeReply | undefined {
  if (method === "sendchataction") return sendChatAction(r.chats, r.params);
  const known = method === "sendmessage" || method === "sendmediagroup" || method === "sendpoll" || method in MEDIA_METHODS;
  if (!known) return undefined;
  const target = findChat(r.chats, r.params.chat_id);
  if (typeof target === "string") return fail(400, target);
  const thread = threadOf(target, r.params.message_thread_id);
  if (thread instanceof Error) return fail(400, thread.message);
  const send: Send = { bot: r.bot, chat: target, thread, params: r.params, req: r.req, ctx: r.ctx, messageId: r.messageId };
  if (method === "sendmessage") return sendMessage(send);
  if (method === "sendpoll") return sendPoll(send);
  if (method === "sendmediagroup") return sendMediaGroup(send);
  return sendMedia(send, MEDIA_METHODS[method]!);
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
  const items = formJson(s.params.media);
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
  const raw = formJson(s.params.options);
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
    from: botUser(s.bot),
    chat: { id: chat.id, type: chat.type, ...(chat.title ? { title: chat.title } : {}), ...(chat.username ? { username: chat.username } : {}), ...(chat.isForum ? { is_forum: true } : {}) },
    date: Math.floor(Date.now() / 1000),
    ...(s.thread === undefined ? {} : { message_thread_id: s.thread, is_topic_message: true }),
  };
}

export function botUser(bot: Bot) {
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

export function ok(result: unknown): FakeReply {
  return { status: 200, json: { ok: true, result } };
}

export function fail(status: number, description: string, parameters?: Record<string, unknown>): FakeReply {
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

