import { type ChannelAdapter, ChannelError, type ReceivedBatch } from "@gw/channels";
import {
  DEFAULT_DISCORD_BOTS,
  DEFAULT_DISCORD_CHANNELS,
  DEFAULT_DISCORD_USERS,
  type FakeDiscord,
  type FakeDiscordGateway,
  startFakeDiscord,
  startFakeDiscordGateway,
} from "@gw/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestHttp, testHttp } from "../../contract-helpers.js";
import { discordPlugin } from "../plugin.js";
import { DiscordGatewayReceiver } from "./receiver.js";
import { DiscordSettingsSchema } from "../settings.js";

const [bot] = DEFAULT_DISCORD_BOTS;
const [general, thread] = DEFAULT_DISCORD_CHANNELS;
const [person] = DEFAULT_DISCORD_USERS;
const GUILD = "1300000000000000001";
const author = { id: person!.id, username: person!.username, global_name: "Some One" };

/** Reads a receiver in the background, keeping every batch, until stopped. */
function reading(adapter: ChannelAdapter, cursor?: string) {
  const controller = new AbortController();
  const batches: ReceivedBatch[] = [];
  const done = (async () => {
    for await (const batch of adapter.inbound!.receiver!.receive(cursor, controller.signal)) batches.push(batch);
  })();
  const until = async (check: () => boolean, what: string) => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    if (!check()) throw new Error(`${what}: not in time`);
  };
  return {
    batches,
    messages: () => batches.flatMap((b) => b.messages),
    until,
    done,
    async stop() {
      controller.abort();
      await done.catch(() => undefined);
    },
  };
}

describe("discord gateway receiver", () => {
  let rest: FakeDiscord;
  let gw: FakeDiscordGateway;
  let http: TestHttp;
  const readers: Array<{ stop(): Promise<void> }> = [];

  const adapter = (over: Record<string, unknown> = {}): ChannelAdapter =>
    discordPlugin.create({
      channelId: "discord",
      accountId: "default",
      settings: DiscordSettingsSchema.parse({ botToken: bot!.token, apiBaseUrl: rest.baseUrl, gatewayUrl: gw.url, ...over }),
      http: http.factory,
    });
  const read = (a: ChannelAdapter, cursor?: string) => {
    const reader = reading(a, cursor);
    readers.push(reader);
    return reader;
  };

  beforeEach(async () => {
    rest = await startFakeDiscord();
    gw = await startFakeDiscordGateway({ bots: DEFAULT_DISCORD_BOTS, heartbeatIntervalMs: 200 });
    http = testHttp({ secrets: [bot!.token] });
  });
  afterEach(async () => {
    for (const r of readers.splice(0)) await r.stop();
    await http.close();
    await gw.close();
    await rest.close();
  });

  it("has a receiver unless inbound is off", () => {
    expect(adapter().inbound?.receiver).toBeDefined();
    expect(adapter({ inbound: "off" }).inbound?.receiver).toBeUndefined();
  });

  it("identifies with the message intents, stores the new session, and heartbeats", async () => {
    const r = read(adapter());
    await r.until(() => r.batches.length === 1, "READY stored");
    expect(gw.stats.intents).toEqual([(1 << 9) | (1 << 12) | (1 << 15)]);
    const cursor = JSON.parse(r.batches[0]!.cursor) as { sessionId: string; seq: number; resumeUrl: string };
    expect(r.batches[0]!.messages).toEqual([]);
    expect(cursor).toEqual({ sessionId: gw.sessions()[0], seq: 1, resumeUrl: gw.url });
    await r.until(() => gw.stats.heartbeats >= 2, "heartbeats");
  });

  it("maps DMs and mentions, answers threads in their thread, and drops what is not for the bot", async () => {
    const r = read(adapter());
    await r.until(() => r.batches.length === 1, "ready");
    const dm = gw.userWrites({ channelId: "1400000000000000001", author, content: "hi there" });
    gw.userWrites({ channelId: general!.id, guildId: GUILD, author, content: "people talking" });
    const mention = gw.userWrites({ channelId: general!.id, guildId: GUILD, author, content: `<@${bot!.id}> what's up`, mentions: [bot!.id] });
    const inThread = gw.userWrites({ channelId: thread!.id, guildId: GUILD, author, content: `hey <@!${bot!.id}>`, mentions: [bot!.id] });
    const reply = gw.userWrites({ channelId: general!.id, guildId: GUILD, author, content: "thanks", replyTo: { id: "1", authorId: bot!.id } });
    gw.userWrites({ channelId: general!.id, guildId: GUILD, author: { id: bot!.id, username: bot!.username, bot: true }, content: `own <@${bot!.id}>`, mentions: [bot!.id] });
    const otherBot = gw.userWrites({ channelId: "1400000000000000001", author: { id: "77", username: "robot", bot: true }, content: "beep" });
    await r.until(() => r.messages().length === 5, "five messages");
    expect(r.messages().map(({ eventId, chat, threadId, sender, senderName, chatType, mentioned, fromBot, text }) => ({ eventId, chat, threadId, sender, senderName, chatType, mentioned, fromBot, text }))).toEqual([
      { eventId: dm.id, chat: `user:${person!.id}`, threadId: undefined, sender: person!.id, senderName: "Some One", chatType: "direct", mentioned: false, fromBot: false, text: "hi there" },
      { eventId: mention.id, chat: `channel:${general!.id}`, threadId: undefined, sender: person!.id, senderName: "Some One", chatType: "group", mentioned: true, fromBot: false, text: "what's up" },
      { eventId: inThread.id, chat: `channel:${general!.id}`, threadId: thread!.id, sender: person!.id, senderName: "Some One", chatType: "group", mentioned: true, fromBot: false, text: "hey" },
      { eventId: reply.id, chat: `channel:${general!.id}`, threadId: undefined, sender: person!.id, senderName: "Some One", chatType: "group", mentioned: true, fromBot: false, text: "thanks" },
      { eventId: otherBot.id, chat: "user:77", threadId: undefined, sender: "77", senderName: "robot", chatType: "direct", mentioned: false, fromBot: true, text: "beep" },
    ]);
    const last = JSON.parse(r.batches.at(-1)!.cursor) as { seq: number };
    expect(last.seq).toBe(8);
  });

  it("resumes after a dropped connection and gets what was sent meanwhile, once", async () => {
    const r = read(adapter());
    await r.until(() => r.batches.length === 1, "ready");
    gw.userWrites({ channelId: "1400000000000000001", author, content: "before" });
    await r.until(() => r.messages().length === 1, "first");
    gw.dropConnections();
    gw.userWrites({ channelId: "1400000000000000001", author, content: "while away" });
    await r.until(() => r.messages().length === 2, "missed message");
    expect(r.messages().map((m) => m.text)).toEqual(["before", "while away"]);
    expect(gw.stats).toMatchObject({ identifies: 1, resumes: 1, resumed: 1, open: 1 });
    gw.askToReconnect();
    await r.until(() => gw.stats.resumed === 2, "resumed after RECONNECT");
    gw.userWrites({ channelId: "1400000000000000001", author, content: "after" });
    await r.until(() => r.messages().length === 3, "third");
    expect(gw.stats.identifies).toBe(1);
  });

  it("cuts a zombie connection whose heartbeats go unanswered, and resumes", async () => {
    const r = read(adapter());
    await r.until(() => r.batches.length === 1, "ready");
    gw.ackHeartbeats(false);
    await r.until(() => gw.stats.connections === 2, "reconnected after missed ACKs");
    gw.ackHeartbeats(true);
    await r.until(() => gw.stats.resumed === 1, "resumed");
    gw.userWrites({ channelId: "1400000000000000001", author, content: "still there" });
    await r.until(() => r.messages().length === 1, "message after the zombie");
    expect(gw.stats).toMatchObject({ identifies: 1, open: 1 });
  });

  it("resumes the stored session from its cursor, so another replica picks up where the first stopped", async () => {
    const first = read(adapter());
    await first.until(() => first.batches.length === 1, "ready");
    gw.userWrites({ channelId: "1400000000000000001", author, content: "stored" });
    await first.until(() => first.messages().length === 1, "stored");
    const cursor = first.batches.at(-1)!.cursor;
    await first.stop();
    gw.userWrites({ channelId: "1400000000000000001", author, content: "in between" });
    const second = read(adapter(), cursor);
    await second.until(() => second.messages().length === 1, "replayed");
    expect(second.messages()[0]!.text).toBe("in between");
    expect(gw.stats).toMatchObject({ identifies: 1, resumes: 1, resumed: 1, resumeSeqs: [JSON.parse(cursor).seq] });
  });

  it("identifies anew when Discord refuses the resume", async () => {
    const first = read(adapter());
    await first.until(() => first.batches.length === 1, "ready");
    const cursor = first.batches[0]!.cursor;
    await first.stop();
    gw.refuseResumes(true);
    const second = read(adapter(), cursor);
    await second.until(() => gw.stats.identifies === 2 && second.batches.length === 1, "identified again");
    expect(gw.stats.resumes).toBe(1);
    expect(JSON.parse(second.batches[0]!.cursor).sessionId).not.toBe(JSON.parse(cursor).sessionId);
  });

  it("fails for good on a refused token, and after repeated failed connections", async () => {
    const wrongToken = new DiscordGatewayReceiver({ gatewayUrl: gw.url, token: "nope" }, { me: async () => ({ id: bot!.id }), channel: async () => ({ type: 0 }) });
    const refused = await (async () => {
      for await (const batch of wrongToken.receive(undefined, AbortSignal.timeout(5_000))) void batch;
    })().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ChannelError);
    expect((refused as ChannelError).message).toContain("4004");

    const nowhere = new DiscordGatewayReceiver(
      { gatewayUrl: "ws://127.0.0.1:1", token: bot!.token, maxFailedConnects: 3, backoffBaseMs: 10, backoffMaxMs: 20 },
      { me: async () => ({ id: bot!.id }), channel: async () => ({ type: 0 }) },
    );
    const down = await (async () => {
      for await (const batch of nowhere.receive(undefined, AbortSignal.timeout(5_000))) void batch;
    })().catch((err: unknown) => err);
    expect(down).toBeInstanceOf(ChannelError);
    expect((down as ChannelError).kind).toBe("unavailable");
    expect((down as ChannelError).message).toContain("3 connections failed in a row");
  });

  it("shows typing in a channel, a thread, and a user's DM", async () => {
    const a = adapter();
    await a.typing!.show(`channel:${general!.id}`, undefined, AbortSignal.timeout(5_000));
    await a.typing!.show(`channel:${general!.id}`, thread!.id, AbortSignal.timeout(5_000));
    await a.typing!.show(`user:${person!.id}`, undefined, AbortSignal.timeout(5_000));
    const typed = rest.requests.filter((req) => req.path.endsWith("/typing")).map((req) => req.path.split("/")[4]);
    expect(typed.slice(0, 2)).toEqual([general!.id, thread!.id]);
    expect(typed).toHaveLength(3);
    expect(rest.requests.some((req) => req.path.endsWith("/users/@me/channels"))).toBe(true);
  });
});
