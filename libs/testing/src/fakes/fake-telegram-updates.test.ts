import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_TELEGRAM_BOTS, type FakeTelegram, startFakeTelegram } from "./fake-telegram.js";

const [one, two] = DEFAULT_TELEGRAM_BOTS;

describe("fake Telegram: getUpdates and webhooks", () => {
  let tg: FakeTelegram;
  const call = async (method: string, params: Record<string, unknown>, token = one!.token, signal?: AbortSignal) => {
    const res = await fetch(`${tg.baseUrl}/bot${token}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(params),
      signal,
    });
    return { status: res.status, body: (await res.json()) as { ok: boolean; result?: unknown; description?: string } };
  };
  const ids = (result: unknown) => (result as Array<{ update_id: number }>).map((u) => u.update_id);

  beforeEach(async () => {
    tg = await startFakeTelegram();
  });
  afterEach(() => tg.close());

  it("hands out queued updates until an offset past them confirms them", async () => {
    const a = tg.userWrites({ chatId: 4242, text: "hello" });
    const b = tg.userWrites({ chatId: 4242, text: "again" });
    expect(b.update_id).toBe(a.update_id + 1);
    expect(ids((await call("getUpdates", {})).body.result)).toEqual([a.update_id, b.update_id]);
    expect(ids((await call("getUpdates", { offset: a.update_id + 1 })).body.result)).toEqual([b.update_id]);
    expect(ids((await call("getUpdates", { offset: b.update_id + 1 })).body.result)).toEqual([]);
    expect(ids((await call("getUpdates", {})).body.result)).toEqual([]);
    expect(tg.pollStats().offsets).toEqual([undefined, a.update_id + 1, b.update_id + 1, undefined]);
  });

  it("builds messages the way Telegram sends them: chat, sender, mentions, topics, replies", async () => {
    const update = tg.userWrites({ chatId: -1001234567890, text: "hey @fake_one_bot look", threadId: 9, replyToBot: true });
    expect(update.message).toMatchObject({
      chat: { id: -1001234567890, type: "supergroup", is_forum: true },
      from: { id: 7, is_bot: false },
      text: "hey @fake_one_bot look",
      entities: [{ type: "mention", offset: 4, length: 13 }],
      message_thread_id: 9,
      is_topic_message: true,
      reply_to_message: { from: { id: 100001, is_bot: true } },
    });
  });

  it("holds a long poll until an update is queued, or until its timeout passes", async () => {
    const started = Date.now();
    const empty = await call("getUpdates", { timeout: 1 });
    expect(empty.body.result).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const held = call("getUpdates", { timeout: 30 });
    await new Promise((r) => setTimeout(r, 100));
    expect(tg.pollStats().active).toBe(1);
    const update = tg.userWrites({ chatId: 4242, text: "wake up" });
    expect(ids((await held).body.result)).toEqual([update.update_id]);
    expect(tg.pollStats().active).toBe(0);
  });

  it("ends a held poll with 409 when a second poller of the same bot asks, as Telegram does", async () => {
    const first = call("getUpdates", { timeout: 30 });
    await new Promise((r) => setTimeout(r, 100));
    const second = call("getUpdates", { timeout: 1 });
    const ended = await first;
    expect(ended.status).toBe(409);
    expect(ended.body.description).toBe("Conflict: terminated by other getUpdates request; make sure that only one bot instance is running");
    expect((await second).status).toBe(200);
    expect(tg.pollStats()).toMatchObject({ conflicts: 1, maxActive: 2, active: 0 });
    // Another bot's poll is its own.
    await call("getUpdates", {}, two!.token);
    expect(tg.pollStats(two!.token).conflicts).toBe(0);
  });

  it("forgets a held poll whose client went away", async () => {
    const controller = new AbortController();
    const held = call("getUpdates", { timeout: 30 }, one!.token, controller.signal).catch(() => "aborted");
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    expect(await held).toBe("aborted");
    await new Promise((r) => setTimeout(r, 50));
    expect(tg.pollStats().active).toBe(0);
    await call("getUpdates", {});
    expect(tg.pollStats().conflicts).toBe(0);
  });

  it("refuses getUpdates while a webhook is set, until deleteWebhook", async () => {
    expect((await call("setWebhook", { url: "https://bot.example/hook", secret_token: "s3cret" })).body).toMatchObject({ ok: true, description: "Webhook was set" });
    expect(tg.webhookOf()).toEqual({ url: "https://bot.example/hook", secretToken: "s3cret" });
    expect((await call("getWebhookInfo", {})).body.result).toMatchObject({ url: "https://bot.example/hook" });
    const refused = await call("getUpdates", {});
    expect(refused.status).toBe(409);
    expect(refused.body.description).toBe("Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
    expect((await call("deleteWebhook", {})).body).toMatchObject({ ok: true, result: true, description: "Webhook was deleted" });
    expect((await call("deleteWebhook", {})).body.description).toBe("Webhook is already deleted");
    expect((await call("getUpdates", {})).status).toBe(200);
  });

  it("filters by allowed_updates, which it remembers, and checks limit", async () => {
    tg.queueUpdate({ edited_message: { message_id: 1, text: "edited" } });
    const message = tg.userWrites({ chatId: 4242, text: "new" });
    expect(ids((await call("getUpdates", { allowed_updates: ["message"] })).body.result)).toEqual([message.update_id]);
    expect(ids((await call("getUpdates", {})).body.result)).toEqual([message.update_id]);
    expect((await call("getUpdates", { limit: 101 })).status).toBe(400);
  });
});
