/**
 * The inbound half of the fake Bot API: updates people's messages make, and the two ways a bot
 * gets them. `getUpdates` long-polls (offset, limit, timeout, allowed_updates): it confirms every
 * update below `offset`, answers at once when updates wait, else holds the request until one is
 * queued or `timeout` seconds pass. As on the real API, a second getUpdates of the same bot
 * ends the held one with 409 "terminated by other getUpdates request", and getUpdates is
 * refused with 409 while a webhook is set (`setWebhook` / `deleteWebhook` / `getWebhookInfo`).
 */
import type { FakeTelegramFile, TelegramFiles } from "./fake-telegram-files.js";
import type { FakeReply, FakeRequest } from "./platform-fake.js";

export interface TelegramUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
}

export interface TelegramEntity {
  type: string;
  offset: number;
  length: number;
  user?: TelegramUser;
}

export interface TelegramUpdate {
  update_id: number;
  message?: Record<string, unknown>;
  [kind: string]: unknown;
}

/** What a person writes, for `userWrites`. */
export interface UserMessage {
  /** The bot's token (default: the fake's first bot). */
  bot?: string;
  chatId: number;
  text: string;
  /** The writer (default: a person whose id is the chat id for private chats, 7 in groups). */
  from?: Partial<TelegramUser>;
  /** A forum topic (`message_thread_id`). */
  threadId?: number;
  /** Whether the message replies to one of the bot's (as a mention does, groups answer it). */
  replyToBot?: boolean;
  /** A file sent with it (fake-telegram-files.ts); `text` is then its caption. */
  file?: FakeTelegramFile;
}

export interface PollStats {
  /** The `offset` of every getUpdates, in arrival order (undefined when none was sent). */
  offsets: Array<number | undefined>;
  /** How many getUpdates were ended by a second one (two pollers of one bot). */
  conflicts: number;
  /** getUpdates being answered right now, and the most there ever were at once. */
  active: number;
  maxActive: number;
}

interface BotState {
  pending: TelegramUpdate[];
  nextId: number;
  webhook?: { url: string; secretToken?: string };
  allowed?: string[];
  /** The held getUpdates: woken by a queued update, ended with a conflict when another arrives. */
  held?: { wake(): void; end(reply: FakeReply): void };
  stats: PollStats;
}

interface BotInfo {
  id: number;
  token: string;
  username: string;
}

type Params = Record<string, unknown>;

const ok = (result: unknown, description?: string): FakeReply => ({ status: 200, json: { ok: true, result, ...(description ? { description } : {}) } });
const conflict = (description: string): FakeReply => ({ status: 409, json: { ok: false, error_code: 409, description: `Conflict: ${description}` } });
const badRequest = (description: string): FakeReply => ({ status: 400, json: { ok: false, error_code: 400, description: `Bad Request: ${description}` } });

export const UPDATE_METHODS = new Set(["getupdates", "setwebhook", "deletewebhook", "getwebhookinfo"]);

export class TelegramUpdates {
  private readonly bots = new Map<string, BotState>();
  private messageId = 5_000;

  constructor(
    private readonly known: readonly BotInfo[],
    private readonly files?: TelegramFiles,
  ) {}

  private state(token: string): BotState {
    let state = this.bots.get(token);
    if (state === undefined) {
      state = { pending: [], nextId: 700_000_001, stats: { offsets: [], conflicts: 0, active: 0, maxActive: 0 } };
      this.bots.set(token, state);
    }
    return state;
  }

  /** Queues an update for a bot (its `update_id` is assigned) and wakes a held poll. */
  queue(token: string, update: Omit<TelegramUpdate, "update_id">): TelegramUpdate {
    const state = this.state(token);
    const full = { update_id: state.nextId++, ...update };
    state.pending.push(full);
    state.held?.wake();
    return full;
  }

  /** A person writes `text` to the bot: the update, with mention entities for every @bot named. */
  userWrites(msg: UserMessage): TelegramUpdate {
    const bot = msg.bot === undefined ? this.known[0] : this.known.find((b) => b.token === msg.bot);
    if (bot === undefined) throw new Error("userWrites: unknown bot");
    const privateChat = msg.chatId > 0;
    const from: TelegramUser = { id: privateChat ? msg.chatId : 7, is_bot: false, first_name: "Test", last_name: "Person", username: "test_person", ...msg.from };
    const chat = privateChat
      ? { id: msg.chatId, type: "private", first_name: from.first_name, ...(from.username ? { username: from.username } : {}) }
      : { id: msg.chatId, type: "supergroup", title: "Fake group", ...(msg.threadId === undefined ? {} : { is_forum: true }) };
    const entities = mentionEntities(msg.text, this.known);
    const message: Record<string, unknown> = {
      message_id: ++this.messageId,
      from,
      chat,
      date: Math.floor(Date.now() / 1000),
      ...(msg.file === undefined || this.files === undefined
        ? { text: msg.text, ...(entities.length > 0 ? { entities } : {}) }
        : { ...this.files.messageFields(msg.file), ...(msg.text === "" ? {} : { caption: msg.text }) }),
      ...(msg.threadId === undefined ? {} : { message_thread_id: msg.threadId, is_topic_message: true }),
      ...(msg.replyToBot
        ? { reply_to_message: { message_id: this.messageId - 1, from: { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username }, chat, date: Math.floor(Date.now() / 1000), text: "earlier answer" } }
        : {}),
    };
    return this.queue(bot.token, { message });
  }

  stats(token: string): PollStats {
    return this.state(token).stats;
  }

  webhook(token: string): { url: string; secretToken?: string } | undefined {
    return this.state(token).webhook;
  }

  route(token: string, method: string, params: Params, req: FakeRequest): FakeReply | Promise<FakeReply> {
    const state = this.state(token);
    if (method === "setwebhook") {
      const url = typeof params.url === "string" ? params.url : "";
      if (url === "") return this.deleteWebhook(state, params);
      if (!/^https?:\/\//.test(url)) return badRequest("bad webhook: An HTTPS URL must be provided for webhook");
      state.webhook = { url, ...(typeof params.secret_token === "string" ? { secretToken: params.secret_token } : {}) };
      if (truthy(params.drop_pending_updates)) state.pending = [];
      return ok(true, "Webhook was set");
    }
    if (method === "deletewebhook") return this.deleteWebhook(state, params);
    if (method === "getwebhookinfo") {
      return ok({ url: state.webhook?.url ?? "", has_custom_certificate: false, pending_update_count: state.pending.length });
    }
    return this.getUpdates(state, params, req);
  }

  private deleteWebhook(state: BotState, params: Params): FakeReply {
    const had = state.webhook !== undefined;
    state.webhook = undefined;
    if (truthy(params.drop_pending_updates)) state.pending = [];
    return ok(true, had ? "Webhook was deleted" : "Webhook is already deleted");
  }

  private async getUpdates(state: BotState, params: Params, req: FakeRequest): Promise<FakeReply> {
    const offset = params.offset === undefined ? undefined : Number(params.offset);
    state.stats.offsets.push(offset);
    if (state.webhook !== undefined) return conflict("can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
    const limit = params.limit === undefined ? 100 : Number(params.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return badRequest("limit must be between 1 and 100");
    const timeout = params.timeout === undefined ? 0 : Number(params.timeout);
    const allowed = parseList(params.allowed_updates);
    if (allowed !== undefined) state.allowed = allowed;
    if (offset !== undefined && Number.isFinite(offset)) state.pending = state.pending.filter((u) => u.update_id >= offset);
    // Another poller of this bot: the request it held is ended, as Telegram does.
    if (state.held !== undefined) {
      state.stats.conflicts += 1;
      state.held.end(conflict("terminated by other getUpdates request; make sure that only one bot instance is running"));
    }
    const stats = state.stats;
    stats.active += 1;
    stats.maxActive = Math.max(stats.maxActive, stats.active);
    try {
      const ready = this.take(state, limit);
      if (hasUpdates(ready) || !(timeout > 0)) return ready;
      return await new Promise<FakeReply>((resolve) => {
        const held = {
          wake: () => held.end(this.take(state, limit)),
          end: (reply: FakeReply) => {
            clearTimeout(timer);
            req.signal?.removeEventListener("abort", gone);
            if (state.held === held) state.held = undefined;
            resolve(reply);
          },
        };
        const gone = () => held.end(ok([]));
        const timer = setTimeout(() => held.wake(), timeout * 1000);
        req.signal?.addEventListener("abort", gone, { once: true });
        state.held = held;
      });
    } finally {
      stats.active -= 1;
    }
  }

  private take(state: BotState, limit: number): FakeReply {
    const allowed = state.allowed;
    const visible = state.pending.filter((u) => allowed === undefined || allowed.length === 0 || Object.keys(u).some((k) => allowed.includes(k)));
    return ok(visible.slice(0, limit));
  }
}

function hasUpdates(reply: FakeReply): boolean {
  const result = (reply.json as { result?: unknown } | undefined)?.result;
  return Array.isArray(result) && result.length > 0;
}

/** `@username` of every known bot in the text, as Telegram marks them (UTF-16 offsets). */
function mentionEntities(text: string, bots: readonly BotInfo[]): TelegramEntity[] {
  const entities: TelegramEntity[] = [];
  for (const match of text.matchAll(/@[A-Za-z0-9_]{4,32}/g)) {
    if (bots.some((b) => `@${b.username}`.toLowerCase() === match[0].toLowerCase())) {
      entities.push({ type: "mention", offset: match.index, length: match[0].length });
    }
  }
  return entities;
}

function parseList(value: unknown): string[] | undefined {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== "string") return undefined;
  try {
    const parsed = JSON.parse(value) as unknown;
    return Array.isArray(parsed) ? parsed.map(String) : undefined;
  } catch {
    return undefined;
  }
}

function truthy(value: unknown): boolean {
  return value === true || value === "true" || value === "1";
}
