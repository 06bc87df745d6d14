/**
 * Slack Web API (https://api.slack.com/web): `POST /api/<method>` with a Bearer bot token and a
 * JSON or form body. Refusals are HTTP 200 `{ ok: false, error: "<code>" }`; only rate limits
 * change the status (429 with `Retry-After` in seconds). Media by URL travels as image blocks
 * (recorded with kind "image"), or as a link in a mrkdwn section (`<url|label>`, recorded with
 * kind "link": what the reader sees, and what Slack fetches to unfurl).
 */
import {
  bearerToken,
  bodyFields,
  type FakeMedia,
  type FakeReply,
  type FakeRequest,
  type PlatformContext,
  type PlatformFake,
  startPlatformFake,
} from "./platform-fake.js";
import { formJson } from "./form-json.js";

/** Slack truncates past 40,000 characters and refuses with msg_too_long beyond it. */
export const SLACK_TEXT_LIMIT = 40_000;

export interface FakeSlackBot {
  token: string;
  userId: string;
  botId: string;
  teamId: string;
  team: string;
}

export interface FakeSlackConversation {
  id: string;
  name?: string;
  /** Whether the bot is in it (default true); posting elsewhere is `not_in_channel`. */
  isMember?: boolean;
}

export interface FakeSlack extends PlatformFake {
  readonly bots: readonly FakeSlackBot[];
  readonly conversations: readonly FakeSlackConversation[];
  readonly users: readonly string[];
  /**
   * Keeps a file a person shared and answers its file object for an event's `files`: its
   * `url_private` (on the fake's origin) needs a bot token, as Slack's does.
   */
  keepFile(data: Uint8Array, mimetype: string, name: string): Record<string, unknown>;
  /** The file ids downloaded, in order. */
  readonly fileDownloads: readonly string[];
}

export const DEFAULT_SLACK_BOTS: readonly FakeSlackBot[] = [
  { token: "xoxb-fake-slack-token-one", userId: "U0BOTONE", botId: "B0BOTONE", teamId: "T0FAKE", team: "Fake Team" },
  { token: "xoxb-fake-slack-token-two", userId: "U0BOTTWO", botId: "B0BOTTWO", teamId: "T0FAKE", team: "Fake Team" },
];

export const DEFAULT_SLACK_CONVERSATIONS: readonly FakeSlackConversation[] = [
  { id: "C0FAKE0001", name: "general" },
  { id: "C0FAKE0002", name: "private-ops", isMember: false },
];

type Params = Record<string, unknown>;

export async function startFakeSlack(
  opts: { bots?: readonly FakeSlackBot[]; conversations?: readonly FakeSlackConversation[]; users?: readonly string[] } = {},
): Promise<FakeSlack> {
  const bots = [...(opts.bots ?? DEFAULT_SLACK_BOTS)];
  const conversations = [...(opts.conversations ?? DEFAULT_SLACK_CONVERSATIONS)];
  const users = [...(opts.users ?? ["U0FAKEUSER"])];
  let seq = 0;
  // Message ids are timestamps with microseconds; unique and increasing per workspace.
  const nextTs = () => `${1_700_000_000 + ++seq}.${String(seq).padStart(6, "0").slice(-6)}`;

  const files = new Map<string, { data: Uint8Array; mimetype: string }>();
  const fileDownloads: string[] = [];
  const filePrivate = (req: FakeRequest, id: string): FakeReply => {
    if (!bots.some((b) => b.token === bearerToken(req))) return { status: 302, headers: { location: "https://slack.com/signin" } };
    const file = files.get(id);
    if (file === undefined) return { status: 404, text: "Not Found" };
    fileDownloads.push(id);
    return { status: 200, headers: { "content-type": file.mimetype }, bytes: file.data };
  };

  const route = (req: FakeRequest, ctx: PlatformContext): FakeReply => {
    const download = /^\/files-pri\/T0FAKE-([\w]+)\/[^/]+$/.exec(req.path);
    if (download !== null && req.method === "GET") return filePrivate(req, download[1]!);
    const method = /^\/api\/([\w.]+)$/.exec(req.path)?.[1];
    if (method === undefined) return { status: 404, text: "Not Found" };
    const params: Params = { ...req.query, ...bodyFields(req) };
    const isJson = (req.headers["content-type"] ?? "").startsWith("application/json");
    // JSON bodies must carry the token in the header; forms may carry it as a field.
    const token = bearerToken(req) ?? (isJson ? undefined : str(params.token));
    if (token === undefined) return refuse("not_authed");
    const bot = bots.find((b) => b.token === token);
    if (bot === undefined) return refuse("invalid_auth");
    const warnings = isJson && !/charset/i.test(req.headers["content-type"] ?? "") ? ["missing_charset"] : [];
    if (method === "auth.test") {
      return ok({ url: "https://fake-team.slack.com/", team: bot.team, user: "fake-bot", team_id: bot.teamId, user_id: bot.userId, bot_id: bot.botId, is_enterprise_install: false });
    }
    if (method === "conversations.open") {
      const ids = (str(params.users) ?? "").split(",").filter(Boolean);
      if (ids.length === 0) return refuse("users_list_not_supplied");
      if (!ids.every((id) => users.includes(id))) return refuse("user_not_found");
      return ok({ channel: { id: dmId(ids.join("")) } });
    }
    if (method !== "chat.postMessage") return refuse("unknown_method");
    return postMessage(bot, params, ctx, warnings);
  };

  const postMessage = (bot: FakeSlackBot, params: Params, ctx: PlatformContext, warnings: string[]): FakeReply => {
    const channel = resolveChannel(str(params.channel));
    if (typeof channel !== "string") return refuse(channel.error);
    const blocks = formJson(params.blocks);
    const text = str(params.text);
    if ((text === undefined || text === "") && blocks === undefined && params.attachments === undefined) return refuse("no_text");
    if (text !== undefined && text.length > SLACK_TEXT_LIMIT) return refuse("msg_too_long");
    const parsed = parseBlocks(blocks);
    if (parsed === undefined) return refuse("invalid_blocks");
    const media: FakeMedia[] = [...parsed.media, ...attachmentImages(formJson(params.attachments))];
    const threadTs = str(params.thread_ts);
    const ts = nextTs();
    ctx.deliver({
      id: ts,
      account: bot.userId,
      chat: channel,
      text: text ?? (parsed.texts.join("\n") || undefined),
      media,
      ...(threadTs === undefined ? {} : { threadId: threadTs }),
    });
    const message = { type: "message", text: text ?? "", user: bot.userId, bot_id: bot.botId, ts, team: bot.teamId, ...(Array.isArray(blocks) ? { blocks } : {}), ...(threadTs ? { thread_ts: threadTs } : {}) };
    return ok({ channel, ts, message }, warnings);
  };

  const resolveChannel = (value: string | undefined): string | { error: string } => {
    if (value === undefined || value === "") return { error: "channel_not_found" };
    if (users.includes(value)) return dmId(value); // a user id posts to the bot's DM with them
    const found = value.startsWith("#")
      ? conversations.find((c) => c.name === value.slice(1))
      : conversations.find((c) => c.id === value) ?? (value.startsWith("D") ? { id: value } : undefined);
    if (found === undefined) return { error: "channel_not_found" };
    if (found.isMember === false) return { error: "not_in_channel" };
    return found.id;
  };

  const fake = await startPlatformFake({
    basePath: "/api",
    tellsRetryAfter: true,
    dedupesOnClientKey: false,
    wire: {
      route,
      // Slack refuses with HTTP 200 whatever the cause; `status` has no say here.
      reject: ({ reason }) => refuse(reason ?? "channel_not_found"),
      rateLimit: ({ retryAfterSeconds }) => ({
        status: 429,
        headers: { "retry-after": String(retryAfterSeconds) },
        json: { ok: false, error: "ratelimited" },
      }),
      unavailable: ({ status = 503 }) =>
        status === 500 ? { status, json: { ok: false, error: "fatal_error" } } : { status, headers: { "content-type": "text/html" }, text: "<html><body>Slack is temporarily unavailable</body></html>" },
    },
  });
  const keepFile = (data: Uint8Array, mimetype: string, name: string) => {
    const id = `F0FAKE${files.size + 1}`;
    files.set(id, { data, mimetype });
    const url = `${new URL(fake.baseUrl).origin}/files-pri/T0FAKE-${id}/${encodeURIComponent(name)}`;
    return { id, name, mimetype, filetype: name.split(".").at(-1) ?? "", size: data.byteLength, url_private: url, url_private_download: `${url}?download=1` };
  };
  return Object.assign(fake, { bots, conversations, users, keepFile, fileDownloads });
}

function dmId(userId: string): string {
  return `D${userId.replace(/^U/, "")}`;
}

/** A link in mrkdwn: `<url>` or `<url|label>`; `&`, `<` and `>` inside are HTML-escaped. */
const MRKDWN_LINK = /<(https?:\/\/[^|>\s]+)(?:\|[^>]*)?>/g;

function unescapeMrkdwn(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** Texts of section blocks, URLs of image blocks and of mrkdwn links, in order; undefined when a block is malformed. */
function parseBlocks(blocks: unknown): { texts: string[]; media: FakeMedia[] } | undefined {
  const out = { texts: [] as string[], media: [] as FakeMedia[] };
  if (blocks === undefined) return out;
  if (!Array.isArray(blocks) || blocks.length > 50) return undefined;
  for (const block of blocks as Params[]) {
    if (typeof block !== "object" || block === null || typeof block.type !== "string") return undefined;
    if (block.type === "image") {
      const url = str(block.image_url);
      if (url === undefined || !/^https?:\/\//.test(url) || str(block.alt_text) === undefined) return undefined;
      out.media.push({ url, kind: "image" });
    } else if (block.type === "section") {
      const object = block.text as Params | undefined;
      const text = object?.text;
      if (typeof text !== "string") return undefined;
      out.texts.push(text);
      if (object?.type === "mrkdwn") {
        for (const link of text.matchAll(MRKDWN_LINK)) out.media.push({ url: unescapeMrkdwn(link[1]!), kind: "link" });
      }
    }
  }
  return out;
}

function attachmentImages(attachments: unknown): FakeMedia[] {
  if (!Array.isArray(attachments)) return [];
  return attachments.flatMap((a: Params) => (typeof a?.image_url === "string" ? [{ url: a.image_url, kind: "image" }] : []));
}

function ok(fields: Params, warnings: string[] = []): FakeReply {
  return { status: 200, json: { ok: true, ...fields, ...(warnings.length ? { response_metadata: { warnings } } : {}) } };
}

function refuse(error: string): FakeReply {
  return { status: 200, json: { ok: false, error } };
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

