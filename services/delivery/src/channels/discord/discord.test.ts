import { type ChannelAdapter, ChannelError, type OutboundMessage, type OutboundPoll, statusOf } from "@gw/channels";
import type { SsrfPolicy } from "@gw/http-client";
import {
  DEFAULT_DISCORD_BOTS,
  DEFAULT_DISCORD_CHANNELS,
  DEFAULT_DISCORD_USERS,
  type FakeDiscord,
  type FakeMediaServer,
  isFakeFile,
  startFakeDiscord,
  startFakeMediaServer,
} from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "@gw/config";
import { ChannelDirectory } from "../../channel-directory.js";
import { HttpClients } from "../../http-clients.js";
import { CHANNEL_PLUGINS } from "../index.js";
import { bucketCooldownMs, discordErrorMessage } from "./api.js";
import { attachmentName } from "./attachments.js";
import { discordNonce, discordPlugin } from "./plugin.js";
import { parseDiscordRecipient } from "./recipient.js";
import { DiscordSettingsSchema } from "./settings.js";

const [bot] = DEFAULT_DISCORD_BOTS;
const [general, thread] = DEFAULT_DISCORD_CHANNELS;
const [someone] = DEFAULT_DISCORD_USERS;
const UNKNOWN = "1999999999999999999";
const signal = () => AbortSignal.timeout(10_000);

let fake: FakeDiscord;
let media: FakeMediaServer;
const clients = new HttpClients([bot!.token]);
let keys = 0;

function adapter(ssrf: SsrfPolicy = { allowHosts: ["127.0.0.1"] }): ChannelAdapter {
  const settings = DiscordSettingsSchema.parse({ botToken: bot!.token, apiBaseUrl: fake.baseUrl });
  return discordPlugin.create({ channelId: "discord", accountId: "default", settings, http: (opts) => clients.factory({ ...opts, ssrf }) });
}

function message(to: string, extra: Partial<OutboundMessage> = {}): OutboundMessage {
  return { to, text: "hello", mediaUrls: [], gifPlayback: false, idempotencyKey: `key-${++keys}`, ...extra };
}

function poll(extra: Partial<OutboundPoll> = {}): OutboundPoll {
  return { to: `channel:${general!.id}`, question: "Lunch?", options: ["yes", "no"], allowMultipleAnswers: false, anonymous: false, idempotencyKey: `poll-${++keys}`, ...extra };
}

async function failure(call: Promise<unknown>): Promise<ChannelError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChannelError);
  return err as ChannelError;
}

const posts = () => fake.requests.filter((r) => r.method === "POST").map((r) => r.path.replace("/api/v10", ""));

beforeAll(async () => {
  fake = await startFakeDiscord();
  media = await startFakeMediaServer();
});
afterAll(async () => {
  await clients.close();
  await fake.close();
  await media.close();
});
beforeEach(() => fake.reset());

describe("discord recipients", () => {
  it("takes channel:<id>, user:<id> and a bare id, and normalises them", () => {
    const a = adapter();
    expect(a.validateRecipient(` Channel:${general!.id} `)).toBe(`channel:${general!.id}`);
    expect(a.validateRecipient(`user: ${someone!.id}`)).toBe(`user:${someone!.id}`);
    expect(a.validateRecipient(general!.id)).toBe(general!.id);
    expect(parseDiscordRecipient(general!.id)).toEqual({ kind: "bare", id: general!.id });
  });

  it("refuses other prefixes, names and ids that are no snowflakes", () => {
    for (const bad of ["<#1100000000000000001>", "role:1100000000000000001", "user:", "123", "1".repeat(21), "channel:general"]) {
      expect(() => parseDiscordRecipient(bad), bad).toThrow(ChannelError);
    }
  });
});

describe("discord sends", () => {
  it("posts JSON with the user agent, a 25-character nonce it enforces, and no mass mentions", async () => {
    const a = adapter();
    const msg = message(`channel:${general!.id}`);
    await a.send(msg, signal());
    const req = fake.requests[0]!;
    expect(req.headers["user-agent"]).toMatch(/^DiscordBot \(.+, .+\)$/);
    expect(req.body).toEqual({ content: "hello", allowed_mentions: { parse: ["users"] }, nonce: discordNonce(msg.idempotencyKey), enforce_nonce: true });
    expect(discordNonce(msg.idempotencyKey)).toHaveLength(25);
    expect(discordNonce("a".repeat(500))).not.toBe(discordNonce(`${"a".repeat(499)}b`));
  });

  it("posts a threadId into the thread's own channel", async () => {
    await adapter().send(message(`channel:${general!.id}`, { threadId: thread!.id }), signal());
    expect(posts()).toEqual([`/channels/${thread!.id}/messages`]);
    expect(fake.delivered[0]).toMatchObject({ chat: general!.id, threadId: thread!.id });
  });

  it("opens a user's DM once and posts there; a DM threadId is the message the reply quotes", async () => {
    const a = adapter();
    const first = await a.send(message(`user:${someone!.id}`), signal());
    await a.send(message(`user:${someone!.id}`, { threadId: first.messageId }), signal());
    expect(fake.requests[0]).toMatchObject({ method: "POST", path: "/api/v10/users/@me/channels", body: { recipient_id: someone!.id } });
    const dm = fake.delivered[0]!.chat;
    expect(posts()).toEqual(["/users/@me/channels", `/channels/${dm}/messages`, `/channels/${dm}/messages`]);
    expect(fake.requests[2]!.body).toMatchObject({ message_reference: { message_id: first.messageId, fail_if_not_exists: false } });
    expect(fake.delivered[1]).toMatchObject({ chat: dm, threadId: first.messageId });
  });

  it("retries a bare id once as a user when Discord knows no such channel", async () => {
    const receipt = await adapter().send(message(someone!.id), signal());
    expect(posts()).toEqual([`/channels/${someone!.id}/messages`, "/users/@me/channels", `/channels/${fake.delivered[0]!.chat}/messages`]);
    expect(receipt.messageIds).toEqual([fake.delivered[0]!.id]);
  });

  it("rejects a bare id that is neither channel nor user, and never tries channel:<id> as a user", async () => {
    const a = adapter();
    const neither = await failure(a.send(message(UNKNOWN), signal()));
    expect(neither).toMatchObject({ kind: "rejected", platformCode: "10003" });
    expect(neither.message).toContain(`no channel and no user ${UNKNOWN}`);
    fake.reset();
    const channel = await failure(a.send(message(`channel:${UNKNOWN}`), signal()));
    expect(channel).toMatchObject({ kind: "rejected", platformCode: "10003", status: 404 });
    expect(posts()).toEqual([`/channels/${UNKNOWN}/messages`]);
  });

  it("rejects a user who takes no DMs from the bot (50007) with Discord's reason", async () => {
    const a = adapter();
    await a.send(message(`user:${someone!.id}`), signal()); // opens and caches the DM
    fake.reset();
    fake.next({ kind: "raw", status: 403, headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "Cannot send messages to this user", code: 50007 }) });
    const err = await failure(a.send(message(`user:${someone!.id}`), signal()));
    expect(err).toMatchObject({ kind: "rejected", platformCode: "50007", status: 403 });
    expect(err.message).toContain("Cannot send messages to this user (code 50007)");
  });

  it("uploads media as files[n] with payload_json naming each attachment", async () => {
    const receipt = await adapter().send(message(`channel:${general!.id}`, { text: "two files", mediaUrls: [media.url("photo.png"), media.url("loop.gif")] }), signal());
    const body = fake.requests[0]!.body as Record<string, unknown>;
    expect(JSON.parse(body.payload_json as string)).toMatchObject({
      content: "two files",
      attachments: [
        { id: 0, filename: "photo.png" },
        { id: 1, filename: "loop.gif" },
      ],
    });
    expect(isFakeFile(body["files[0]"]) && body["files[0]"].contentType).toBe("image/png");
    expect(isFakeFile(body["files[1]"]) && body["files[1]"].filename).toBe("loop.gif");
    expect(receipt.messageIds).toHaveLength(1);
  });

  it("rejects media it cannot fetch before calling Discord, naming which", async () => {
    const err = await failure(adapter().send(message(`channel:${general!.id}`, { mediaUrls: [media.url("photo.png"), media.url("missing.png")] }), signal()));
    expect(err.kind).toBe("rejected");
    expect(err.message).toMatch(/^media 2 \(.*missing\.png\) answered HTTP 404$/);
    expect(fake.requests).toHaveLength(0);
  });

  it("fetches media without the bot's credentials, through the SSRF guard", async () => {
    // A media URL on the API's own origin must not be fetched with the bot token.
    const err = await failure(adapter().send(message(`channel:${general!.id}`, { mediaUrls: [`${fake.baseUrl}/users/@me`] }), signal()));
    expect(err.message).toContain("answered HTTP 401");
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
    const guarded = await failure(adapter({}).send(message(`channel:${general!.id}`, { mediaUrls: [media.url("photo.png")] }), signal()));
    expect(guarded.kind).toBe("rejected");
    expect(guarded.message).toContain("non-public address");
  });

  it("names a downloaded file from the server, else the URL, with an extension from its type", () => {
    const download = (url: string, headers: Record<string, string>) => ({ status: 200, headers, url, bytes: Buffer.alloc(0), truncated: false });
    expect(attachmentName(download("https://x.example/a/b/chart", { "content-type": "image/png" }), 0)).toBe("chart.png");
    expect(attachmentName(download("https://x.example/dl?id=1", { "content-disposition": 'attachment; filename="Q3 report.pdf"' }), 0)).toBe("Q3_report.pdf");
    expect(attachmentName(download("https://x.example/", { "content-type": "application/x-unknown" }), 2)).toBe("attachment-3");
    expect(attachmentName(download("https://x.example/f", { "content-disposition": "attachment; filename*=UTF-8''na%C3%AFve.txt" }), 0)).toBe("na_ve.txt");
  });

  it("reports the route's cooldown when a successful answer leaves no request in its bucket", async () => {
    const created = { id: "1300000000000000009", channel_id: general!.id };
    fake.next({ kind: "raw", status: 200, headers: { "content-type": "application/json", "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "2.250" }, body: JSON.stringify(created) });
    const receipt = await adapter().send(message(`channel:${general!.id}`), signal());
    expect(receipt).toEqual({ messageId: created.id, messageIds: [created.id], cooldownMs: 2250 });
    const plain = await adapter().send(message(`channel:${general!.id}`), signal());
    expect(plain.cooldownMs).toBeUndefined();
    expect(bucketCooldownMs({ "x-ratelimit-remaining": "1", "x-ratelimit-reset-after": "3" })).toBeUndefined();
    expect(bucketCooldownMs({ "x-ratelimit-remaining": "0" })).toBeUndefined();
  });

  it("reads a 429's fractional retry_after and says when the limit is global", async () => {
    fake.next({ kind: "raw", status: 429, headers: { "content-type": "application/json", "retry-after": "2" }, body: JSON.stringify({ message: "You are being rate limited.", retry_after: 1.5, global: true }) });
    const err = await failure(adapter().send(message(`channel:${general!.id}`), signal()));
    expect(err).toMatchObject({ kind: "rate_limited", retryAfterMs: 1500, rateLimitScope: "account" });
    expect(err.message).toContain("(global limit)");
  });

  it("holds the whole bot on a global 429, told by the body or the headers; a route's 429 holds the chat", async () => {
    fake.next({ kind: "rate_limit", retryAfterSeconds: 0.5, global: true });
    expect(await failure(adapter().send(message(`channel:${general!.id}`), signal()))).toMatchObject({ retryAfterMs: 500, rateLimitScope: "account" });
    fake.next({ kind: "raw", status: 429, headers: { "content-type": "application/json", "x-ratelimit-scope": "global" }, body: JSON.stringify({ message: "You are being rate limited.", retry_after: 1 }) });
    expect(await failure(adapter().send(message(`channel:${general!.id}`), signal()))).toMatchObject({ rateLimitScope: "account" });
    fake.next({ kind: "rate_limit", retryAfterSeconds: 0.5 });
    const route = await failure(adapter().send(message(`channel:${general!.id}`), signal()));
    expect(route).toMatchObject({ kind: "rate_limited", retryAfterMs: 500 });
    expect(route.rateLimitScope).toBeUndefined();
  });

  it("spells out Discord's field errors", async () => {
    const err = await failure(adapter().send(message(`channel:${general!.id}`, { text: "x".repeat(2001) }), signal()));
    expect(err.kind).toBe("rejected");
    expect(err.message).toContain("Invalid Form Body (code 50035): content: Must be 2000 or fewer in length.");
    expect(discordErrorMessage({ message: "Invalid Form Body", code: 50035, errors: { embeds: { "0": { image: { url: { _errors: [{ code: "URL_TYPE_INVALID_URL", message: "Not a well formed URL." }] } } } } } })).toBe(
      "Invalid Form Body (code 50035): embeds.0.image.url: Not a well formed URL.",
    );
  });
});

describe("discord polls", () => {
  it("sends a native poll open for 24 hours", async () => {
    await adapter().polls!.send(poll({ allowMultipleAnswers: true }), signal());
    expect(fake.requests[0]!.body).toMatchObject({
      poll: { question: { text: "Lunch?" }, answers: [{ poll_media: { text: "yes" } }, { poll_media: { text: "no" } }], allow_multiselect: true, duration: 24 },
      enforce_nonce: true,
    });
  });

  it("refuses anonymous polls and polls past Discord's limits without a call", async () => {
    const a = adapter();
    expect(await failure(a.polls!.send(poll({ anonymous: true }), signal()))).toMatchObject({ kind: "unsupported" });
    const many = await failure(a.polls!.send(poll({ options: Array.from({ length: 11 }, (_, i) => `o${i}`) }), signal()));
    expect(many).toMatchObject({ kind: "rejected", message: "a Discord poll has 1-10 answers, not 11" });
    expect(await failure(a.polls!.send(poll({ options: ["x".repeat(56)] }), signal()))).toMatchObject({ kind: "rejected" });
    expect(await failure(a.polls!.send(poll({ question: "q".repeat(301) }), signal()))).toMatchObject({ kind: "rejected" });
    expect(fake.requests).toHaveLength(0);
  });
});

describe("discord status", () => {
  it("names the bot, and reports a bad token as unreachable with Discord's reason", async () => {
    expect(await statusOf(adapter(), signal())).toEqual({ reachable: true, identity: bot!.username });
    const settings = DiscordSettingsSchema.parse({ botToken: "wrong-token", apiBaseUrl: fake.baseUrl });
    const wrong = discordPlugin.create({ channelId: "discord", accountId: "x", settings, http: clients.factory });
    expect(await statusOf(wrong, signal())).toEqual({ reachable: false, error: "discord answered HTTP 401: 401: Unauthorized" });
  });
});

describe("discord plugin registration", () => {
  it("is listed in CHANNEL_PLUGINS and builds an account from the config file", () => {
    const config = parseConfig(`{ channels: { default: "dc", dc: { kind: "discord", botToken: "t0k", apiBaseUrl: "${fake.baseUrl}" } } }`, { env: {} });
    const [entry] = ChannelDirectory.build(config.channels, CHANNEL_PLUGINS, clients.factory).list();
    expect(entry!.kind).toBe("discord");
    expect(entry!.accounts[0]!.adapter.limits).toEqual({ textChunk: 2000, mediaPerMessage: 10 });
  });
});
