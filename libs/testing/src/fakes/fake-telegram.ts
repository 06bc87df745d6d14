/**
 * Telegram Bot API (https://core.telegram.org/bots/api): `POST /bot<token>/<method>` with
 * parameters in the query, a JSON body, a form or multipart (uploads, and JSON-serialised
 * objects as string fields). Answers `{ ok: true, result }` or
 * `{ ok: false, error_code, description, parameters? }`, with Telegram's own texts.
 */
import { STATUS_CODES } from "node:http";
import { bodyFields, type FakeReply, type FakeRequest, type PlatformContext, type PlatformFake, startPlatformFake } from "./platform-fake.js";
import { type Bot, botUser, fail, ok, sendMethod } from "./fake-telegram-messages.js";
import { TelegramFiles } from "./fake-telegram-files.js";
import { type PollStats, type TelegramUpdate, TelegramUpdates, UPDATE_METHODS, type UserMessage } from "./fake-telegram-updates.js";

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
    if (method === "getme") return ok(botUser(bot));
    if (method === "getfile") return files.getFile(params.file_id);
    if (UPDATE_METHODS.has(method)) return updates.route(bot.token, method, params, req);
    return sendMethod(method, { bot, chats, params, req, ctx, messageId }) ?? fail(404, "Not Found");
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

/** What sits in front of the Bot API answers its other 5xx with an nginx page, not JSON. */
function proxyPage(status: number): FakeReply {
  const title = `${status} ${STATUS_CODES[status] ?? "Error"}`;
  return {
    status,
    headers: { "content-type": "text/html" },
    text: `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n`,
  };
}
