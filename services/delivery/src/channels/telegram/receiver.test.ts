import { type ChannelAdapter, ChannelError, type ReceivedBatch } from "@gw/channels";
import { DEFAULT_TELEGRAM_BOTS, type FakeTelegram, startFakeTelegram } from "@gw/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestHttp, testHttp } from "../contract-helpers.js";
import { telegramPlugin } from "./plugin.js";
import { TelegramSettingsSchema } from "./settings.js";

const [bot] = DEFAULT_TELEGRAM_BOTS;
const FORUM = -1001234567890;

describe("telegram long polling", () => {
  let tg: FakeTelegram;
  let http: TestHttp;
  let stop: AbortController;

  const adapter = (inbound?: "polling" | "webhook"): ChannelAdapter =>
    telegramPlugin.create({
      channelId: "telegram",
      accountId: "default",
      settings: TelegramSettingsSchema.parse({
        botToken: bot!.token,
        apiBaseUrl: tg.baseUrl,
        ...(inbound ? { inbound } : {}),
        // Webhook mode needs its secret (the secret_token given to setWebhook).
        ...(inbound === "webhook" ? { webhookSecret: "hook-secret" } : {}),
      }),
      http: http.factory,
    });

  /** Reads `count` batches from a fresh receive() and stops it. */
  async function read(cursor: string | undefined, count: number): Promise<ReceivedBatch[]> {
    const batches: ReceivedBatch[] = [];
    const controller = new AbortController();
    for await (const batch of adapter("polling").inbound!.receiver!.receive(cursor, controller.signal)) {
      batches.push(batch);
      if (batches.length === count) break;
    }
    return batches;
  }

  beforeEach(async () => {
    tg = await startFakeTelegram();
    http = testHttp({ secrets: [bot!.token] });
    stop = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    await http.close();
    await tg.close();
  });

  it("has a receiver only when the account polls", () => {
    expect(adapter("polling").inbound?.receiver).toBeDefined();
    expect(adapter("webhook").inbound?.receiver).toBeUndefined();
    expect(adapter().inbound?.receiver).toBeUndefined();
  });

  it("deletes a webhook first, then long-polls with offset = last update_id + 1", async () => {
    await fetch(`${tg.baseUrl}/bot${bot!.token}/setWebhook`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: "https://example.org/hook" }) });
    const first = tg.userWrites({ chatId: 4242, text: "hello" });
    const [batch] = await read(undefined, 1);
    expect(tg.webhookOf()).toBeUndefined();
    expect(batch!.cursor).toBe(String(first.update_id + 1));
    expect(batch!.messages).toEqual([
      {
        eventId: String(first.update_id),
        chat: "4242",
        sender: "4242",
        senderName: "Test Person",
        chatType: "direct",
        mentioned: false,
        fromBot: false,
        text: "hello",
        sentAt: (first.message!.date as number) * 1000,
      },
    ]);
    const polls = tg.requests.filter((r) => r.path.endsWith("/getUpdates"));
    expect(polls[0]!.body).toEqual({ timeout: 30, limit: 100, allowed_updates: ["message"] });
    // Resumed from the stored cursor: the next poll confirms what was stored, nothing older comes back.
    const second = tg.userWrites({ chatId: 4242, text: "again" });
    const [next] = await read(batch!.cursor, 1);
    expect(next!.messages.map((m) => m.text)).toEqual(["again"]);
    expect(next!.cursor).toBe(String(second.update_id + 1));
    expect(tg.pollStats().offsets.at(-1)).toBe(first.update_id + 1);
  });

  it("holds the poll open until a person writes", async () => {
    const receiving = read(undefined, 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(tg.pollStats().active).toBe(1);
    tg.userWrites({ chatId: 4242, text: "late" });
    const [batch] = await receiving;
    expect(batch!.messages[0]!.text).toBe("late");
  });

  it("maps groups, topics, mentions, replies to the bot and other bots", async () => {
    tg.userWrites({ chatId: FORUM, text: "@fake_one_bot  what time is it?", threadId: 12 });
    tg.userWrites({ chatId: FORUM, text: "just chatting" });
    tg.userWrites({ chatId: FORUM, text: "thanks", replyToBot: true });
    tg.userWrites({ chatId: FORUM, text: "/help@fake_one_bot now" });
    tg.userWrites({ chatId: FORUM, text: "beep", from: { id: 99, is_bot: true, first_name: "Other" } });
    const [batch] = await read(undefined, 1);
    expect(batch!.messages.map(({ chat, threadId, chatType, mentioned, fromBot, text }) => ({ chat, threadId, chatType, mentioned, fromBot, text }))).toEqual([
      { chat: String(FORUM), threadId: "12", chatType: "group", mentioned: true, fromBot: false, text: "what time is it?" },
      { chat: String(FORUM), threadId: undefined, chatType: "group", mentioned: false, fromBot: false, text: "just chatting" },
      { chat: String(FORUM), threadId: undefined, chatType: "group", mentioned: true, fromBot: false, text: "thanks" },
      { chat: String(FORUM), threadId: undefined, chatType: "group", mentioned: true, fromBot: false, text: "/help now" },
      { chat: String(FORUM), threadId: undefined, chatType: "group", mentioned: false, fromBot: true, text: "beep" },
    ]);
  });

  it("moves the cursor past updates that carry no message", async () => {
    const edit = tg.queueUpdate({ message: { not: "a message" } });
    const [batch] = await read(undefined, 1);
    expect(batch).toEqual({ messages: [], cursor: String(edit.update_id + 1) });
  });

  it("fails with the platform's reason when another poller holds the bot, or the token is bad", async () => {
    tg.next({ kind: "reject", status: 401, reason: "Unauthorized" });
    const bad = await read(undefined, 1).catch((err: unknown) => err);
    expect(bad).toBeInstanceOf(ChannelError);
    expect((bad as ChannelError).message).toContain("Unauthorized");
    expect((bad as ChannelError).message).not.toContain(bot!.token);

    const other = read(undefined, 1).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 300));
    await fetch(`${tg.baseUrl}/bot${bot!.token}/getUpdates`, { method: "POST" });
    const conflict = await other;
    expect(conflict).toBeInstanceOf(ChannelError);
    expect((conflict as ChannelError).message).toContain("terminated by other getUpdates request");
  });

  it("stops at once when told to", async () => {
    const controller = new AbortController();
    const receiving = (async () => {
      for await (const batch of adapter("polling").inbound!.receiver!.receive(undefined, controller.signal)) void batch;
    })();
    await new Promise((r) => setTimeout(r, 300));
    controller.abort();
    await receiving.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    expect(tg.pollStats().active).toBe(0);
  });
});
