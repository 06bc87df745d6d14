import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_TELEGRAM_BOTS, type FakeTelegram, startFakeTelegram } from "./fake-telegram.js";

const [one, two] = DEFAULT_TELEGRAM_BOTS;
const forum = -1001234567890;

describe("fake Telegram Bot API", () => {
  let tg: FakeTelegram;
  const call = async (method: string, params: Record<string, unknown>, token = one!.token) => {
    const res = await fetch(`${tg.baseUrl}/bot${token}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(params),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  beforeAll(async () => {
    tg = await startFakeTelegram();
  });
  afterAll(() => tg.close());
  beforeEach(() => tg.reset());

  it("answers getMe with the bot behind the token", async () => {
    const { body } = await call("getMe", {}, two!.token);
    expect(body).toMatchObject({ ok: true, result: { id: 100002, is_bot: true, username: "fake_two_bot" } });
  });

  it("sends a message into a forum topic and records it", async () => {
    const { status, body } = await call("sendMessage", { chat_id: forum, text: "hi", message_thread_id: 7 });
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: true, result: { text: "hi", chat: { id: forum, type: "supergroup" }, message_thread_id: 7 } });
    const id = (body.result as { message_id: number }).message_id;
    expect(tg.delivered).toEqual([{ id: String(id), account: "100001", chat: String(forum), text: "hi", media: [], threadId: "7" }]);
    expect(tg.requests[0]).toMatchObject({ method: "POST", path: `/bot${one!.token}/sendMessage`, body: { chat_id: forum, text: "hi" } });
  });

  it("finds public chats by @username and takes form posts", async () => {
    const res = await fetch(`${tg.baseUrl}/bot${one!.token}/sendMessage`, { method: "POST", body: new URLSearchParams({ chat_id: "@FakeForum", text: "x" }) });
    expect(((await res.json()) as { ok: boolean }).ok).toBe(true);
    expect(tg.delivered[0]!.chat).toBe(String(forum));
  });

  it("refuses the way Telegram does", async () => {
    expect(await call("sendMessage", { chat_id: 1, text: "x" })).toEqual({
      status: 400,
      body: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
    });
    expect((await call("sendMessage", { chat_id: 4242, text: "x" }, "999:nope")).body).toEqual({ ok: false, error_code: 401, description: "Unauthorized" });
    expect((await call("sendMessage", { chat_id: 4242, text: " " })).body.description).toBe("Bad Request: message text is empty");
    expect((await call("sendMessage", { chat_id: 4242, text: "x".repeat(4097) })).body.description).toBe("Bad Request: message is too long");
    expect((await call("sendMessage", { chat_id: 4242, text: "x", message_thread_id: 3 })).body.description).toBe("Bad Request: message thread not found");
    expect((await call("noSuchMethod", {})).status).toBe(404);
    expect(tg.delivered).toHaveLength(0);
  });

  it("counts the text after HTML markup is parsed away", async () => {
    const text = `<b>${"x".repeat(4096)}</b>`;
    expect((await call("sendMessage", { chat_id: 4242, text, parse_mode: "HTML" })).body.ok).toBe(true);
  });

  it("sends media by URL, uploads, albums and polls", async () => {
    await call("sendPhoto", { chat_id: 4242, photo: "https://cdn.example/p.png", caption: "look" });
    const form = new FormData();
    form.set("chat_id", "4242");
    form.set("document", new Blob([new Uint8Array([7])]), "a.bin");
    await fetch(`${tg.baseUrl}/bot${one!.token}/sendDocument`, { method: "POST", body: form });
    const album = await call("sendMediaGroup", {
      chat_id: 4242,
      media: [{ type: "photo", media: "https://cdn.example/1.png", caption: "one" }, { type: "photo", media: "https://cdn.example/2.png" }],
    });
    expect((album.body.result as unknown[]).length).toBe(2);
    const poll = await call("sendPoll", { chat_id: 4242, question: "Tea?", options: ["yes", { text: "no" }], is_anonymous: false, allows_multiple_answers: true });
    expect(poll.body.result).toMatchObject({ poll: { question: "Tea?", is_anonymous: false, allows_multiple_answers: true, options: [{ text: "yes" }, { text: "no" }] } });
    expect(tg.delivered.map((d) => [d.text, d.media.map((m) => m.url ?? m.data?.length), d.poll?.anonymous])).toEqual([
      ["look", ["https://cdn.example/p.png"], undefined],
      [undefined, [1], undefined],
      ["one", ["https://cdn.example/1.png"], undefined],
      [undefined, ["https://cdn.example/2.png"], undefined],
      [undefined, [], false],
    ]);
  });

  it("keeps documents out of mixed albums and polls anonymous by default", async () => {
    const mixed = await call("sendMediaGroup", { chat_id: 4242, media: [{ type: "photo", media: "https://a/1" }, { type: "document", media: "https://a/2" }] });
    expect(mixed.body.description).toBe("Bad Request: document can't be mixed with other media types");
    await call("sendPoll", { chat_id: 4242, question: "?", options: ["a", "b"] });
    expect(tg.delivered.at(-1)!.poll).toEqual({ question: "?", options: ["a", "b"], allowMultipleAnswers: false, anonymous: true });
  });

  it("scripts Telegram's own failure forms", async () => {
    tg.next({ kind: "reject", status: 403 });
    tg.next({ kind: "rate_limit", retryAfterSeconds: 5 });
    tg.next({ kind: "unavailable" });
    expect((await call("sendMessage", { chat_id: 4242, text: "x" })).body).toEqual({ ok: false, error_code: 403, description: "Forbidden: bot was blocked by the user" });
    expect((await call("sendMessage", { chat_id: 4242, text: "x" })).body).toEqual({
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 5",
      parameters: { retry_after: 5 },
    });
    const res = await fetch(`${tg.baseUrl}/bot${one!.token}/getMe`);
    expect(res.status).toBe(502);
    expect(await res.text()).toContain("502 Bad Gateway");
  });
});
