import { type ChannelAdapter, ChannelError, type OutboundMessage, statusOf } from "@gw/channels";
import {
  DEFAULT_MEDIA_FILES,
  DEFAULT_TELEGRAM_BOTS,
  type FakeMediaServer,
  type FakeTelegram,
  startFakeMediaServer,
  startFakeTelegram,
} from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestHttp, testHttp } from "../contract-helpers.js";
import { TELEGRAM_CAPTION_MAX, telegramPlugin } from "./plugin.js";
import { TelegramSettingsSchema } from "./settings.js";

const [bot] = DEFAULT_TELEGRAM_BOTS;
const FORUM = "-1001234567890";
const PNG = DEFAULT_MEDIA_FILES["photo.png"]!;

describe("telegram plugin", () => {
  let tg: FakeTelegram;
  let media: FakeMediaServer;
  let http: TestHttp;
  let adapter: ChannelAdapter;

  const message = (extra: Partial<OutboundMessage>): OutboundMessage => ({
    to: FORUM,
    mediaUrls: [],
    gifPlayback: false,
    idempotencyKey: "k",
    ...extra,
  });
  const signal = () => AbortSignal.timeout(10_000);
  const methods = () => tg.requests.map((r) => r.path.slice(r.path.lastIndexOf("/") + 1));
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail("expected a ChannelError"),
      (err: unknown) => {
        expect(err).toBeInstanceOf(ChannelError);
        return err as ChannelError;
      },
    );

  beforeAll(async () => {
    tg = await startFakeTelegram();
    media = await startFakeMediaServer({
      ...DEFAULT_MEDIA_FILES,
      "clip.mp4": { contentType: "video/mp4", data: new Uint8Array([0, 0, 0, 24, 102, 116, 121, 112]) },
      "second.jpg": { contentType: "image/jpeg", data: new Uint8Array([255, 216, 255]) },
      picture: PNG,
      "notes.txt": { contentType: "text/plain", data: new TextEncoder().encode("remember the milk") },
    });
    http = testHttp({ secrets: [bot!.token], mediaHosts: [new URL(media.baseUrl).hostname] });
    adapter = telegramPlugin.create({
      channelId: "telegram",
      accountId: "default",
      settings: TelegramSettingsSchema.parse({ botToken: bot!.token, apiBaseUrl: tg.baseUrl }),
      http: http.factory,
    });
  });
  afterAll(async () => {
    await http.close();
    await tg.close();
    await media.close();
  });
  beforeEach(() => tg.reset());

  it("addresses a public chat by @username", async () => {
    await adapter.send(message({ to: "@fakeforum", text: "hi" }), signal());
    expect(tg.requests[0]!.body).toEqual({ chat_id: "@fakeforum", text: "hi" });
    expect(tg.delivered[0]!.chat).toBe(FORUM);
  });

  it("sends a GIF with sendAnimation, and an MP4 too when gifPlayback asks for a loop", async () => {
    await adapter.send(message({ mediaUrls: [media.url("loop.gif")] }), signal());
    await adapter.send(message({ mediaUrls: [media.url("clip.mp4")], gifPlayback: true }), signal());
    await adapter.send(message({ mediaUrls: [media.url("clip.mp4")] }), signal());
    expect(methods()).toEqual(["sendAnimation", "sendAnimation", "sendVideo"]);
    expect(tg.requests[1]!.body).toMatchObject({ animation: media.url("clip.mp4") });
    expect(tg.delivered.map((d) => d.media[0]!.kind)).toEqual(["animation", "animation", "video"]);
  });

  it("sends photos as one album with the caption on the first, in a topic", async () => {
    const urls = [media.url("photo.png"), media.url("second.jpg")];
    const receipt = await adapter.send(message({ text: "two views", mediaUrls: urls, threadId: "77" }), signal());
    expect(methods()).toEqual(["sendMediaGroup"]);
    expect(tg.requests[0]!.body).toEqual({
      chat_id: FORUM,
      message_thread_id: 77,
      media: [
        { type: "photo", media: urls[0], caption: "two views" },
        { type: "photo", media: urls[1] },
      ],
    });
    expect(receipt.messageIds).toEqual(tg.delivered.map((d) => d.id));
    expect(tg.delivered.map((d) => d.threadId)).toEqual(["77", "77"]);
  });

  it("never mixes a document into a photo album", async () => {
    const receipt = await adapter.send(message({ mediaUrls: [media.url("photo.png"), media.url("report.pdf"), media.url("second.jpg")] }), signal());
    expect(methods()).toEqual(["sendPhoto", "sendDocument", "sendPhoto"]);
    expect(receipt.messageIds).toHaveLength(3);
  });

  it("uploads what Telegram cannot fetch by URL, its kind read from the Content-Type", async () => {
    await adapter.send(message({ mediaUrls: [media.url("picture")], text: "no extension" }), signal());
    await adapter.send(message({ mediaUrls: [media.url("notes.txt")] }), signal());
    expect(methods()).toEqual(["sendPhoto", "sendDocument"]);
    const [photo, doc] = tg.delivered;
    expect(photo).toMatchObject({ text: "no extension", media: [{ kind: "photo", filename: "picture", contentType: "image/png", data: PNG.data }] });
    expect(doc!.media[0]).toMatchObject({ kind: "document", filename: "notes.txt", contentType: "text/plain" });
    expect(new TextDecoder().decode(doc!.media[0]!.data)).toBe("remember the milk");
  });

  it("uploads inside an album with attach:// references", async () => {
    await adapter.send(message({ mediaUrls: [media.url("report.pdf"), media.url("notes.txt")] }), signal());
    expect(methods()).toEqual(["sendMediaGroup"]);
    const body = tg.requests[0]!.body as Record<string, unknown>;
    expect(JSON.parse(body.media as string)).toEqual([
      { type: "document", media: media.url("report.pdf") },
      { type: "document", media: "attach://file1" },
    ]);
    expect(tg.delivered.map((d) => d.media[0]!.filename ?? d.media[0]!.url)).toEqual([media.url("report.pdf"), "notes.txt"]);
  });

  it("sends text too long for a caption as its own message after the media", async () => {
    const text = "x".repeat(TELEGRAM_CAPTION_MAX + 1);
    const receipt = await adapter.send(message({ text, mediaUrls: [media.url("photo.png")] }), signal());
    expect(methods()).toEqual(["sendPhoto", "sendMessage"]);
    expect(tg.requests[0]!.body).not.toHaveProperty("caption");
    expect(tg.delivered.map((d) => d.text)).toEqual([undefined, text]);
    expect(receipt.messageIds).toEqual(tg.delivered.map((d) => d.id));
  });

  it("refuses a medium it cannot fetch, naming it, without calling Telegram", async () => {
    const err = await failure(adapter.send(message({ mediaUrls: [media.url("missing")] }), signal()));
    expect(err.kind).toBe("rejected");
    expect(err.message).toContain(media.url("missing"));
    expect(err.message).toContain("404");
    expect(tg.requests).toHaveLength(0);
  });

  it("asks for a poll with its options, answer mode and anonymity said outright", async () => {
    const receipt = await adapter.polls!.send(
      { to: FORUM, question: "Lunch?", options: ["pizza", "soup"], allowMultipleAnswers: false, anonymous: false, threadId: "77", idempotencyKey: "p" },
      signal(),
    );
    expect(tg.requests[0]).toMatchObject({
      path: `/bot${bot!.token}/sendPoll`,
      body: {
        chat_id: FORUM,
        message_thread_id: 77,
        question: "Lunch?",
        options: [{ text: "pizza" }, { text: "soup" }],
        is_anonymous: false,
        allows_multiple_answers: false,
      },
    });
    expect(receipt.messageId).toBe(tg.delivered[0]!.id);
  });

  it("refuses a threadId that is not a topic id, without a call", async () => {
    const err = await failure(adapter.send(message({ text: "x", threadId: "1700000000.000100" }), signal()));
    expect(err.kind).toBe("rejected");
    expect(err.message).toMatch(/message_thread_id/);
    expect(tg.requests).toHaveLength(0);
  });

  it("keeps Telegram's code and says where a migrated group went", async () => {
    tg.next({
      kind: "raw",
      status: 400,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        ok: false,
        error_code: 400,
        description: "Bad Request: group chat was upgraded to a supergroup chat",
        parameters: { migrate_to_chat_id: -1009876543210 },
      }),
    });
    const err = await failure(adapter.send(message({ text: "x" }), signal()));
    expect(err).toMatchObject({ kind: "rejected", status: 400, platformCode: "400" });
    expect(err.message).toContain("group chat was upgraded to a supergroup chat (the chat is now -1009876543210)");
    tg.next({ kind: "reject", status: 403 });
    expect(await failure(adapter.send(message({ text: "x" }), signal()))).toMatchObject({ kind: "rejected", platformCode: "403" });
  });

  it("judges a refusal that arrives with HTTP 200 by its error_code", async () => {
    const refusal = (code: number, extra = {}) => ({
      kind: "raw" as const,
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ok: false, error_code: code, description: `code ${code} ${bot!.token}`, ...extra }),
    });
    tg.next(refusal(429, { parameters: { retry_after: 3 } }));
    tg.next(refusal(502));
    tg.next(refusal(400));
    expect(await failure(adapter.send(message({ text: "x" }), signal()))).toMatchObject({ kind: "rate_limited", retryAfterMs: 3000 });
    expect(await failure(adapter.send(message({ text: "x" }), signal()))).toMatchObject({ kind: "unavailable" });
    const rejected = await failure(adapter.send(message({ text: "x" }), signal()));
    expect(rejected.kind).toBe("rejected");
    expect(rejected.message).toContain("code 400");
    expect(rejected.message).not.toContain(bot!.token);
  });

  it("calls an answer it cannot read unavailable", async () => {
    tg.next({ kind: "raw", status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ ok: true, result: { nope: 1 } }) });
    expect(await failure(adapter.send(message({ text: "x" }), signal()))).toMatchObject({ kind: "unavailable" });
  });

  it("names the bot by its @username in status, and says why a bad token is unreachable", async () => {
    expect(await statusOf(adapter, signal())).toEqual({ reachable: true, identity: "@fake_one_bot" });
    const strangerHttp = testHttp({ secrets: ["999:not-a-bot"] });
    const stranger = telegramPlugin.create({
      channelId: "telegram",
      accountId: "stranger",
      settings: TelegramSettingsSchema.parse({ botToken: "999:not-a-bot", apiBaseUrl: tg.baseUrl }),
      http: strangerHttp.factory,
    });
    const probe = await statusOf(stranger, signal()).finally(() => strangerHttp.close());
    expect(probe).toMatchObject({ reachable: false });
    expect(probe.error).toContain("Unauthorized");
    expect(probe.error).not.toContain("not-a-bot");
  });
});
