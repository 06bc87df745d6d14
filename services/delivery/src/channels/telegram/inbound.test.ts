import { DEFAULT_TELEGRAM_BOTS, type FakeTelegram, GROUP_ANONYMOUS_BOT, startFakeTelegram, telegramUpdate, telegramWebhookRequest } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, type TestHttp, testHttp } from "../contract-helpers.js";
import { messageOfUpdate as toInboundMessage, UpdateSchema } from "./update-message.js";
import { telegramPlugin } from "./plugin.js";
import { TelegramSettingsSchema } from "./settings.js";

const [bot] = DEFAULT_TELEGRAM_BOTS;
const BOT_ID = Number(bot!.token.split(":")[0]);
const SECRET = "tg-webhook-secret-123";
const FORUM = -1001234567890;

describe("telegram webhooks", () => {
  let tg: FakeTelegram;
  let http: TestHttp;
  const adapter = (settings: Record<string, unknown>) =>
    telegramPlugin.create({
      channelId: "tg",
      accountId: "default",
      settings: TelegramSettingsSchema.parse({ botToken: bot!.token, apiBaseUrl: tg.baseUrl, ...settings }),
      http: http.factory,
    });

  beforeAll(async () => {
    tg = await startFakeTelegram();
    http = testHttp({ secrets: [bot!.token, SECRET] });
  });
  afterAll(async () => {
    await http.close();
    await tg.close();
  });

  it("takes updates that carry the secret token, and refuses the rest with 401", async () => {
    const endpoint = adapter({ webhookSecret: SECRET }).inbound!.webhook!;
    const update = telegramUpdate({ updateId: 900, chatId: 4242, from: { id: 4242, firstName: "Ada", username: "ada" }, text: "hello bot" });
    const ok = await endpoint.handle(rawRequest(telegramWebhookRequest(update, SECRET)));
    expect(ok.reply.status).toBe(200);
    expect(ok.messages).toEqual([
      { eventId: "900", chat: "4242", sender: "4242", senderName: "Ada", chatType: "direct", mentioned: false, fromBot: false, text: "hello bot", sentAt: expect.any(Number) },
    ]);
    for (const secret of [undefined, "wrong", `${SECRET}x`]) {
      const refused = await endpoint.handle(rawRequest(telegramWebhookRequest(update, secret)));
      expect(refused.reply.status).toBe(401);
      expect(refused.messages).toEqual([]);
      expect(refused.reply.body).not.toContain(SECRET);
    }
  });

  it("answers 404, 405 and 400 for other paths, methods and bodies", async () => {
    const endpoint = adapter({ webhookSecret: SECRET }).inbound!.webhook!;
    const signed = telegramWebhookRequest(telegramUpdate({ chatId: 4242, text: "x" }), SECRET);
    expect((await endpoint.handle(rawRequest(signed, { path: "/other" }))).reply.status).toBe(404);
    expect((await endpoint.handle(rawRequest(signed, { method: "GET" }))).reply.status).toBe(405);
    expect((await endpoint.handle(rawRequest({ ...signed, body: "{not json" }))).reply.status).toBe(400);
    expect((await endpoint.handle(rawRequest({ ...signed, body: '{"message":{}}' }))).reply.status).toBe(400);
  });

  it("refuses a webhook mode without a secret at start, naming the key", () => {
    const parsed = TelegramSettingsSchema.safeParse({ botToken: bot!.token, inbound: "webhook" });
    expect(parsed.error?.issues).toEqual([expect.objectContaining({ path: ["webhookSecret"], message: expect.stringMatching(/needs a webhookSecret/) })]);
  });

  it("takes webhooks only in webhook mode", () => {
    expect(adapter({}).inbound?.webhook).toBeUndefined();
    expect(adapter({ webhookSecret: SECRET, inbound: "polling" }).inbound?.webhook).toBeUndefined();
    expect(adapter({ webhookSecret: SECRET, inbound: "webhook" }).inbound?.webhook).toBeDefined();
    expect(adapter({ webhookSecret: SECRET }).inbound?.webhook).toBeDefined();
  });

  it("knows a group message mentions the bot by @username (fetched once with getMe), reply or command", async () => {
    tg.reset();
    const endpoint = adapter({ webhookSecret: SECRET }).inbound!.webhook!;
    const post = async (update: Record<string, unknown>) => (await endpoint.handle(rawRequest(telegramWebhookRequest(update, SECRET)))).messages[0]!;
    const mention = await post(telegramUpdate({ chatId: FORUM, from: { id: 7, firstName: "Bo" }, text: `@${bot!.username} what time is it?`, topicId: 12 }));
    expect(mention).toMatchObject({ chatType: "group", chat: String(FORUM), threadId: "12", mentioned: true, text: "what time is it?", sender: "7" });
    expect((await post(telegramUpdate({ chatId: FORUM, from: { id: 7 }, text: "just chatting @someone_else" }))).mentioned).toBe(false);
    expect((await post(telegramUpdate({ chatId: FORUM, from: { id: 7 }, text: "thanks", replyToUserId: BOT_ID }))).mentioned).toBe(true);
    expect((await post(telegramUpdate({ chatId: FORUM, from: { id: 7 }, text: `/help@${bot!.username}` }))).mentioned).toBe(true);
    expect(tg.requests.filter((r) => r.path.endsWith("/getMe"))).toHaveLength(1);
  });

  it("answers a group message 503 while getMe fails, so Telegram sends it again, and takes it once getMe answers", async () => {
    tg.reset();
    const endpoint = adapter({ webhookSecret: SECRET }).inbound!.webhook!;
    const post = (update: Record<string, unknown>) => endpoint.handle(rawRequest(telegramWebhookRequest(update, SECRET)));
    const mention = telegramUpdate({ chatId: FORUM, from: { id: 7, firstName: "Bo" }, text: `@${bot!.username} hello` });
    tg.next({ kind: "unavailable" });
    const refused = await post(mention);
    expect(refused.reply.status).toBe(503);
    expect(refused.messages).toEqual([]);
    // A private chat needs no username: taken meanwhile, without asking getMe.
    expect((await post(telegramUpdate({ chatId: 4242, text: "hi" }))).messages).toHaveLength(1);
    const redelivered = await post(mention);
    expect(redelivered.reply.status).toBe(200);
    expect(redelivered.messages).toEqual([expect.objectContaining({ chatType: "group", mentioned: true, text: "hello" })]);
    expect(tg.requests.map((r) => r.path.split("/").at(-1))).toEqual(["getMe", "getMe"]);
  });

  it("takes a message an anonymous admin sent on behalf of the group as the group's, not a bot's", async () => {
    const endpoint = adapter({ webhookSecret: SECRET }).inbound!.webhook!;
    const update = telegramUpdate({ chatId: FORUM, senderChat: { id: FORUM, title: "Fake forum" }, text: `@${bot!.username} status?` });
    expect((update.message as { from: { id: number; is_bot: boolean } }).from).toMatchObject({ id: GROUP_ANONYMOUS_BOT.id, is_bot: true });
    const { messages } = await endpoint.handle(rawRequest(telegramWebhookRequest(update, SECRET)));
    expect(messages).toEqual([expect.objectContaining({ sender: String(FORUM), senderName: "Fake forum", fromBot: false, mentioned: true, text: "status?" })]);
  });

  it("marks bots and skips what is not a message someone wrote", () => {
    const identity = { id: BOT_ID, username: bot!.username };
    const fromBot = UpdateSchema.parse(telegramUpdate({ chatId: 4242, from: { id: BOT_ID, isBot: true }, text: "my own answer" }));
    expect(toInboundMessage(fromBot, identity)?.fromBot).toBe(true);
    expect(toInboundMessage(UpdateSchema.parse({ update_id: 1, edited_message: { message_id: 1 } }), identity)).toBeUndefined();
    const channelPost = UpdateSchema.parse({ update_id: 2, message: { message_id: 1, date: 0, chat: { id: -100, type: "channel" }, text: "news" } });
    expect(toInboundMessage(channelPost, identity)).toBeUndefined();
  });

  it("shows typing with sendChatAction, in the forum topic when there is one", async () => {
    tg.reset();
    const plugin = adapter({});
    await plugin.typing!.show(String(FORUM), "12", AbortSignal.timeout(5_000));
    await plugin.typing!.show("4242", undefined, AbortSignal.timeout(5_000));
    const calls = tg.requests.filter((r) => r.path.endsWith("/sendChatAction")).map((r) => r.body);
    expect(calls).toEqual([
      { chat_id: String(FORUM), message_thread_id: 12, action: "typing" },
      { chat_id: "4242", action: "typing" },
    ]);
    await expect(plugin.typing!.show("999", undefined, AbortSignal.timeout(5_000))).rejects.toThrow(/chat not found/);
  });
});
