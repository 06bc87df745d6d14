import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_DISCORD_BOTS, type FakeDiscord, startFakeDiscord } from "./fake-discord.js";

const [one, two] = DEFAULT_DISCORD_BOTS;
const general = "1100000000000000001";
const thread = "1100000000000000002";
const someone = "1200000000000000001";

describe("fake Discord REST API", () => {
  let discord: FakeDiscord;
  const call = async (method: string, path: string, body?: unknown, token = one!.token) => {
    const res = await fetch(`${discord.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bot ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  beforeAll(async () => {
    discord = await startFakeDiscord();
  });
  afterAll(() => discord.close());
  beforeEach(() => discord.reset());

  it("answers /users/@me for the token's bot, with rate-limit headers", async () => {
    const me = await call("GET", "/users/@me", undefined, two!.token);
    expect(me.body).toMatchObject({ id: two!.id, username: "fake-two", bot: true });
    expect(me.headers.get("x-ratelimit-bucket")).toBeTruthy();
    expect(me.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  it("creates a message with a snowflake id and an image embed", async () => {
    const { status, body } = await call("POST", `/channels/${general}/messages`, { content: "hi", embeds: [{ image: { url: "https://cdn.example/a.png" } }] });
    expect(status).toBe(200);
    expect(body).toMatchObject({ channel_id: general, content: "hi", author: { id: one!.id, bot: true } });
    expect(String(body.id)).toMatch(/^\d{17,20}$/);
    expect(discord.delivered).toEqual([{ id: body.id, account: one!.id, chat: general, text: "hi", media: [{ url: "https://cdn.example/a.png", kind: "embed" }] }]);
  });

  it("records a message in a thread against the thread's channel", async () => {
    await call("POST", `/channels/${thread}/messages`, { content: "in thread" });
    expect(discord.delivered[0]).toMatchObject({ chat: general, threadId: thread });
  });

  it("records a reply against the message it quotes", async () => {
    await call("POST", `/channels/${general}/messages`, { content: "re", message_reference: { message_id: "1300000000000000001", fail_if_not_exists: false } });
    expect(discord.delivered[0]).toMatchObject({ chat: general, threadId: "1300000000000000001", text: "re" });
  });

  it("opens one DM channel per user and posts into it", async () => {
    const dm = await call("POST", "/users/@me/channels", { recipient_id: someone });
    const again = await call("POST", "/users/@me/channels", { recipient_id: someone });
    expect(dm.body).toMatchObject({ type: 1, recipients: [{ id: someone }] });
    expect(again.body.id).toBe(dm.body.id);
    await call("POST", `/channels/${String(dm.body.id)}/messages`, { content: "dm" });
    expect(discord.delivered[0]!.chat).toBe(dm.body.id);
    expect((await call("POST", "/users/@me/channels", { recipient_id: "1" })).body).toEqual({ message: "Unknown User", code: 10013 });
  });

  it("takes polls and multipart uploads", async () => {
    await call("POST", `/channels/${general}/messages`, {
      poll: { question: { text: "Lunch?" }, answers: [{ poll_media: { text: "yes" } }, { poll_media: { text: "no" } }], allow_multiselect: true, duration: 1 },
    });
    const form = new FormData();
    form.set("payload_json", JSON.stringify({ content: "file" }));
    form.set("files[0]", new Blob([new Uint8Array([1, 2])], { type: "image/png" }), "a.png");
    await fetch(`${discord.baseUrl}/channels/${general}/messages`, { method: "POST", headers: { authorization: `Bot ${one!.token}` }, body: form });
    expect(discord.delivered[0]!.poll).toEqual({ question: "Lunch?", options: ["yes", "no"], allowMultipleAnswers: true, anonymous: false });
    expect(discord.delivered[1]).toMatchObject({ text: "file", media: [{ filename: "a.png", contentType: "image/png", data: new Uint8Array([1, 2]) }] });
  });

  it("returns the first message for a repeated enforced nonce", async () => {
    const first = await call("POST", `/channels/${general}/messages`, { content: "once", nonce: "k-1", enforce_nonce: true });
    const second = await call("POST", `/channels/${general}/messages`, { content: "once", nonce: "k-1", enforce_nonce: true });
    expect(second.body.id).toBe(first.body.id);
    expect(discord.delivered).toHaveLength(1);
    expect(discord.delivered[0]!.clientKey).toBe("k-1");
  });

  it("refuses with Discord's codes", async () => {
    expect((await call("POST", "/channels/999/messages", { content: "x" })).body).toEqual({ message: "Unknown Channel", code: 10003 });
    expect((await call("POST", `/channels/${general}/messages`, {})).body).toEqual({ message: "Cannot send an empty message", code: 50006 });
    const long = await call("POST", `/channels/${general}/messages`, { content: "x".repeat(2001) });
    expect(long.body).toMatchObject({ code: 50035, errors: { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH" }] } } });
    expect(await call("GET", "/users/@me", undefined, "wrong")).toMatchObject({ status: 401, body: { message: "401: Unauthorized", code: 0 } });
    expect(discord.delivered).toHaveLength(0);
  });

  it("scripts a 429 with Discord's body and headers", async () => {
    discord.next({ kind: "rate_limit", retryAfterSeconds: 1.5 });
    const limited = await call("POST", `/channels/${general}/messages`, { content: "x" });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ message: "You are being rate limited.", retry_after: 1.5, global: false });
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(limited.headers.get("x-ratelimit-reset-after")).toBe("1.500");
    expect(limited.headers.get("x-ratelimit-scope")).toBe("user");
  });

  it("scripts a global 429, the bot's limit over every route", async () => {
    discord.next({ kind: "rate_limit", retryAfterSeconds: 0.5, global: true });
    const limited = await call("POST", `/channels/${general}/messages`, { content: "x" });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ message: "You are being rate limited.", retry_after: 0.5, global: true });
    expect(limited.headers.get("x-ratelimit-scope")).toBe("global");
    expect(limited.headers.get("x-ratelimit-global")).toBe("true");
    expect(limited.headers.get("x-ratelimit-bucket")).toBeNull();
    expect((await call("POST", `/channels/${general}/messages`, { content: "x" })).status).toBe(200);
  });
});
