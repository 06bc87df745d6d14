/**
 * Discord REST API v10 (https://discord.com/developers/docs): `Authorization: Bot <token>`;
 * `POST /channels/{id}/messages` (JSON, or multipart with `payload_json` and `files[n]`),
 * `POST /users/@me/channels` to open a DM, `GET /users/@me`. Errors are `{ message, code }`;
 * 429 is `{ message, retry_after, global }` with `Retry-After` and `X-RateLimit-*` headers, which
 * every answer carries (a global 429, the bot's limit over every route, has `X-RateLimit-Global`
 * and scope `global` instead of a bucket's); `GET /channels/{id}` and
 * `POST /channels/{id}/typing` (204). A thread is a channel of its own whose parent is the chat; a reply
 * (`message_reference`) is recorded against the message it quotes.
 */
import {
  bodyFields,
  type FakeFile,
  type FakeMedia,
  type FakeReply,
  type FakeRequest,
  isFakeFile,
  type PlatformContext,
  type PlatformFake,
  startPlatformFake,
} from "./platform-fake.js";

export const DISCORD_TEXT_LIMIT = 2000;

export interface FakeDiscordBot {
  token: string;
  id: string;
  username: string;
}

export interface FakeDiscordChannel {
  id: string;
  /** 0 guild text, 1 DM, 11 public thread. */
  type: number;
  /** A thread's channel. */
  parentId?: string;
  name?: string;
}

export interface FakeDiscordUser {
  id: string;
  username: string;
}

export interface FakeDiscord extends PlatformFake {
  readonly bots: readonly FakeDiscordBot[];
  readonly channels: readonly FakeDiscordChannel[];
  readonly users: readonly FakeDiscordUser[];
}

export const DEFAULT_DISCORD_BOTS: readonly FakeDiscordBot[] = [
  { token: "ODk5.fake-discord.token-one", id: "899000000000000001", username: "fake-one" },
  { token: "ODk5.fake-discord.token-two", id: "899000000000000002", username: "fake-two" },
];

export const DEFAULT_DISCORD_CHANNELS: readonly FakeDiscordChannel[] = [
  { id: "1100000000000000001", type: 0, name: "general" },
  { id: "1100000000000000002", type: 11, parentId: "1100000000000000001", name: "a thread" },
];

export const DEFAULT_DISCORD_USERS: readonly FakeDiscordUser[] = [{ id: "1200000000000000001", username: "someone" }];

const DISCORD_EPOCH = 1_420_070_400_000n;
type Params = Record<string, unknown>;

export async function startFakeDiscord(
  opts: { bots?: readonly FakeDiscordBot[]; channels?: readonly FakeDiscordChannel[]; users?: readonly FakeDiscordUser[] } = {},
): Promise<FakeDiscord> {
  const bots = [...(opts.bots ?? DEFAULT_DISCORD_BOTS)];
  const channels = [...(opts.channels ?? DEFAULT_DISCORD_CHANNELS)];
  const users = [...(opts.users ?? DEFAULT_DISCORD_USERS)];
  const dms = new Map<string, string>(); // `${botId}:${userId}` -> DM channel id
  const nonces = new Map<string, Params>(); // `${botId}:${nonce}` -> message
  let seq = 0;
  const snowflake = () => String(((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | BigInt(++seq & 0xfff));

  const route = (req: FakeRequest, ctx: PlatformContext): FakeReply => {
    const path = req.path.replace(/^\/api\/v10/, "");
    const bot = bots.find((b) => req.headers.authorization === `Bot ${b.token}`);
    if (bot === undefined) return error(401, "401: Unauthorized", 0);
    if (req.bodyError !== undefined) return error(400, "400: Bad Request", 0);
    if (req.method === "GET" && path === "/users/@me") return ok(userObject(bot.id, bot.username, true));
    if (req.method === "POST" && path === "/users/@me/channels") {
      const recipient = users.find((u) => u.id === String(bodyFields(req).recipient_id));
      if (recipient === undefined) return error(404, "Unknown User", 10013);
      const key = `${bot.id}:${recipient.id}`;
      const id = dms.get(key) ?? snowflake();
      if (!dms.has(key)) {
        dms.set(key, id);
        channels.push({ id, type: 1 });
      }
      return ok({ id, type: 1, last_message_id: null, flags: 0, recipients: [userObject(recipient.id, recipient.username, false)] });
    }
    const channelPath = /^\/channels\/(\d+)(\/typing)?$/.exec(path);
    if (channelPath !== null && (req.method === "GET" || req.method === "POST")) {
      const channel = channels.find((c) => c.id === channelPath[1]);
      if (channel === undefined) return error(404, "Unknown Channel", 10003);
      // Trigger Typing Indicator: 204, the indicator shows for 10 s or until the bot posts.
      if (channelPath[2] !== undefined && req.method === "POST") return { status: 204, headers: rateHeaders(4, 1) };
      if (channelPath[2] === undefined && req.method === "GET") {
        return ok({ id: channel.id, type: channel.type, ...(channel.parentId === undefined ? {} : { parent_id: channel.parentId }), ...(channel.name === undefined ? {} : { name: channel.name }) });
      }
    }
    const target = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (req.method === "POST" && target !== null) {
      const channel = channels.find((c) => c.id === target[1]);
      if (channel === undefined) return error(404, "Unknown Channel", 10003);
      return createMessage(bot, channel, req, ctx);
    }
    return error(404, "404: Not Found", 0);
  };

  const createMessage = (bot: FakeDiscordBot, channel: FakeDiscordChannel, req: FakeRequest, ctx: PlatformContext): FakeReply => {
    const fields = bodyFields(req);
    let body: Params = fields;
    if (typeof fields.payload_json === "string") {
      try {
        body = JSON.parse(fields.payload_json) as Params;
      } catch {
        return formError("payload_json", "JSON_DECODE", "Invalid JSON.");
      }
    }
    const files = Object.entries(fields).filter(([name, value]) => /^files\[\d+\]$/.test(name) && isFakeFile(value));
    const content = typeof body.content === "string" ? body.content : "";
    if (content.length > DISCORD_TEXT_LIMIT) return formError("content", "BASE_TYPE_MAX_LENGTH", `Must be ${DISCORD_TEXT_LIMIT} or fewer in length.`);
    const embeds = Array.isArray(body.embeds) ? (body.embeds as Params[]) : [];
    if (embeds.length > 10) return formError("embeds", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.");
    const poll = body.poll === undefined ? undefined : parsePoll(body.poll);
    if (typeof poll === "string") return formError("poll", "BASE_TYPE_BAD_VALUE", poll);
    if (content.trim() === "" && embeds.length === 0 && files.length === 0 && poll === undefined) {
      return error(400, "Cannot send an empty message", 50006);
    }
    const nonce = body.nonce === undefined ? undefined : String(body.nonce);
    if (nonce !== undefined && nonce.length > 25) return formError("nonce", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.");
    const earlier = nonce !== undefined && body.enforce_nonce === true ? nonces.get(`${bot.id}:${nonce}`) : undefined;
    if (earlier !== undefined) return ok(earlier);
    const media: FakeMedia[] = [
      ...embeds.flatMap((e) => {
        const url = (e.image as Params | undefined)?.url;
        return typeof url === "string" ? [{ url, kind: "embed" }] : [];
      }),
      ...files.map(([, file]) => {
        const f = file as FakeFile;
        return { data: f.data, filename: f.filename, contentType: f.contentType, kind: "attachment" };
      }),
    ];
    const id = snowflake();
    const thread = channel.type === 11 || channel.type === 12;
    // A reply (message_reference of type 0, the default) belongs to the message it quotes.
    const reference = body.message_reference as Params | undefined;
    const quoted = reference !== undefined && (reference.type ?? 0) === 0 ? reference.message_id : undefined;
    const repliesTo = typeof quoted === "string" || typeof quoted === "number" ? String(quoted) : undefined;
    ctx.deliver({
      id,
      account: bot.id,
      chat: thread ? channel.parentId ?? channel.id : channel.id,
      ...(content === "" ? {} : { text: content }),
      media,
      ...(thread ? { threadId: channel.id } : repliesTo !== undefined ? { threadId: repliesTo } : {}),
      ...(poll === undefined ? {} : { poll: { question: poll.question, options: poll.answers, allowMultipleAnswers: poll.multiselect, anonymous: false } }),
      ...(nonce === undefined ? {} : { clientKey: nonce }),
    });
    const message = messageObject({ id, bot, channel, content, embeds, files: files.map(([, file]) => file as FakeFile), nonce, poll, snowflake });
    if (nonce !== undefined) nonces.set(`${bot.id}:${nonce}`, message);
    return ok(message);
  };

  const fake = await startPlatformFake({
    basePath: "/api/v10",
    tellsRetryAfter: true,
    dedupesOnClientKey: true,
    wire: {
      route,
      reject: ({ status = 403, reason }) =>
        status === 404 ? error(404, reason ?? "Unknown Channel", 10003) : error(status, reason ?? "Missing Permissions", 50013),
      rateLimit: ({ retryAfterSeconds, global = false }) => ({
        status: 429,
        headers: {
          // A global limit is no route's bucket: Discord sends no bucket headers with it.
          ...(global ? { "x-ratelimit-global": "true" } : rateHeaders(0, retryAfterSeconds)),
          "retry-after": String(Math.ceil(retryAfterSeconds)),
          "x-ratelimit-scope": global ? "global" : "user",
        },
        json: { message: "You are being rate limited.", retry_after: retryAfterSeconds, global },
      }),
      unavailable: ({ status = 502 }) =>
        status === 500
          ? error(500, "500: Internal Server Error", 0)
          : { status, headers: { "content-type": "text/plain; charset=UTF-8" }, text: `error code: ${status}` },
    },
  });
  return Object.assign(fake, { bots, channels, users });
}

function messageObject(m: {
  id: string;
  bot: FakeDiscordBot;
  channel: FakeDiscordChannel;
  content: string;
  embeds: Params[];
  files: FakeFile[];
  nonce: string | undefined;
  poll: ParsedPoll | undefined;
  snowflake: () => string;
}): Params {
  return {
    id: m.id,
    type: 0,
    channel_id: m.channel.id,
    content: m.content,
    author: userObject(m.bot.id, m.bot.username, true),
    attachments: m.files.map((file, i) => ({ id: m.snowflake(), filename: file.filename, size: file.data.length, url: `https://cdn.discordapp.com/attachments/${m.channel.id}/${m.id}/${i}` })),
    embeds: m.embeds,
    mentions: [],
    mention_roles: [],
    pinned: false,
    mention_everyone: false,
    tts: false,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    flags: 0,
    components: [],
    ...(m.nonce === undefined ? {} : { nonce: m.nonce }),
    ...(m.poll === undefined ? {} : { poll: pollObject(m.poll) }),
  };
}

interface ParsedPoll {
  question: string;
  answers: string[];
  multiselect: boolean;
  duration: number;
}

function parsePoll(value: unknown): ParsedPoll | string {
  const poll = value as Params;
  const question = (poll?.question as Params | undefined)?.text;
  if (typeof question !== "string" || question === "" || question.length > 300) return "question.text must be 1-300 characters";
  if (!Array.isArray(poll.answers) || poll.answers.length < 1 || poll.answers.length > 10) return "answers must hold 1-10 answers";
  const answers = (poll.answers as Params[]).map((a) => (a?.poll_media as Params | undefined)?.text);
  if (!answers.every((a): a is string => typeof a === "string" && a.length > 0 && a.length <= 55)) return "each answer needs poll_media.text of 1-55 characters";
  const duration = poll.duration === undefined ? 24 : Number(poll.duration);
  if (!Number.isInteger(duration) || duration < 1 || duration > 768) return "duration must be 1-768 hours";
  if (poll.allow_multiselect !== undefined && typeof poll.allow_multiselect !== "boolean") return "allow_multiselect must be a boolean";
  return { question, answers, multiselect: poll.allow_multiselect === true, duration };
}

function pollObject(poll: ParsedPoll): Params {
  return {
    question: { text: poll.question },
    answers: poll.answers.map((text, i) => ({ answer_id: i + 1, poll_media: { text } })),
    expiry: new Date(Date.now() + poll.duration * 3_600_000).toISOString(),
    allow_multiselect: poll.multiselect,
    layout_type: 1,
    results: { is_finalized: false, answer_counts: [] },
  };
}

function userObject(id: string, username: string, bot: boolean): Params {
  return { id, username, discriminator: "0", global_name: null, avatar: null, bot, flags: 0 };
}

function rateHeaders(remaining: number, resetAfter: number): Record<string, string> {
  return {
    "x-ratelimit-limit": "5",
    "x-ratelimit-remaining": String(remaining),
    "x-ratelimit-reset": ((Date.now() + resetAfter * 1000) / 1000).toFixed(3),
    "x-ratelimit-reset-after": resetAfter.toFixed(3),
    "x-ratelimit-bucket": "f4k3b0ck37f4k3b0ck37f4k3b0ck37aa",
  };
}

function ok(body: unknown): FakeReply {
  return { status: 200, headers: rateHeaders(4, 1), json: body };
}

function error(status: number, message: string, code: number): FakeReply {
  return { status, headers: rateHeaders(4, 1), json: { message, code } };
}

function formError(field: string, code: string, message: string): FakeReply {
  return { status: 400, json: { message: "Invalid Form Body", code: 50035, errors: { [field]: { _errors: [{ code, message }] } } } };
}
