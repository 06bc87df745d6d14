/**
 * The receiver-fed channels end to end in both modes: a person writes on the Discord Gateway,
 * through signal-cli's receive endpoint or to a Telegram bot that long-polls, the agent runs on the fake model, and its answer is
 * posted back to the same chat (and thread) on the fake platform, with "typing…" meanwhile.
 */
import {
  DEFAULT_DISCORD_BOTS,
  DEFAULT_DISCORD_USERS,
  DEFAULT_SIGNAL_ACCOUNTS,
  DEFAULT_TELEGRAM_BOTS,
  type FakeDiscord,
  type FakeDiscordGateway,
  type FakeModelServer,
  type FakeSignal,
  type FakeTelegram,
  startFakeDiscord,
  startFakeDiscordGateway,
  startFakeModelServer,
  startFakeSignal,
  startFakeTelegram,
} from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { delivered, inboundAgents } from "./fixtures/inbound.js";
import { WsClient } from "./fixtures/ws-client.js";

const [bot, refusedBot] = DEFAULT_DISCORD_BOTS;
const [person] = DEFAULT_DISCORD_USERS;
const [signalNumber] = DEFAULT_SIGNAL_ACCOUNTS;
const [tgBot] = DEFAULT_TELEGRAM_BOTS;
const TG_FORUM = -1001234567890;
const GUILD = "1300000000000000001";
const TEXT_CHANNEL = "1100000000000000001";
const THREAD = "1100000000000000002";
const DM_CHANNEL = "1400000000000000007";
const SIGNAL_PERSON = "+15557770001";
/** signal-cli's base64 id of a group: 32 bytes. */
const SIGNAL_GROUP = Buffer.alloc(32, 7).toString("base64");

describe.each(MODES)("inbound round trips through the receivers (%s)", (mode) => {
  let model: FakeModelServer;
  let rest: FakeDiscord;
  let gateway: FakeDiscordGateway;
  let signal: FakeSignal;
  let telegram: FakeTelegram;
  let gw: GatewayUnderTest;
  let client: WsClient;

  beforeAll(async () => {
    [model, rest, gateway, signal, telegram] = await Promise.all([
      startFakeModelServer(),
      startFakeDiscord({
        channels: [
          { id: TEXT_CHANNEL, type: 0, name: "general" },
          { id: THREAD, type: 11, parentId: TEXT_CHANNEL, name: "a thread" },
          { id: DM_CHANNEL, type: 1 },
        ],
      }),
      // The second bot's token works on REST but the Gateway refuses it (close 4004).
      startFakeDiscordGateway({ bots: [bot!], heartbeatIntervalMs: 5_000 }),
      startFakeSignal({ mode: "normal" }),
      startFakeTelegram(),
    ]);
    const channels = {
      dc: { kind: "discord", botToken: bot!.token, apiBaseUrl: rest.baseUrl, gatewayUrl: gateway.url, dmPolicy: "open" },
      dcrefused: { kind: "discord", botToken: refusedBot!.token, apiBaseUrl: rest.baseUrl, gatewayUrl: gateway.url, dmPolicy: "open" },
      sig: { kind: "signal", bridgeUrl: signal.baseUrl, number: signalNumber, dmPolicy: "open" },
      tgpoll: { kind: "telegram", botToken: tgBot!.token, apiBaseUrl: telegram.baseUrl, inbound: "polling", dmPolicy: "open" },
    };
    gw = await startGateway(mode, {
      ...inboundAgents({ model }),
      // Short enough for the timeout test below; every other turn here takes milliseconds.
      runner: { defaultTimeoutSeconds: 4 },
      extraConfig: { channels, delivery: { pacing: "off", inbound: { timeoutReply: "That took too long; I stopped." } } },
    });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
    // A Gateway has no history: what is written before the bot's session exists never reaches it.
    const deadline = Date.now() + 20_000;
    while (gateway.sessions().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(gateway.sessions()).toHaveLength(1);
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await Promise.all([model?.close(), rest?.close(), gateway?.close(), signal?.close(), telegram?.close()]);
  });

  it("Discord: a DM over the Gateway is answered in the DM, with typing meanwhile, in session dc:user:<id>", async () => {
    gateway.userWrites({ channelId: DM_CHANNEL, author: { id: person!.id, username: person!.username }, content: "hello over discord" });
    const [answer] = await delivered(rest, (d) => d.text === "You said: hello over discord");
    expect(answer).toMatchObject({ account: bot!.id });
    // The DM channel the bot opened for the person (POST /users/@me/channels) is where it went.
    const opened = rest.requests.find((r) => r.path.endsWith("/users/@me/channels"));
    expect((opened?.body as { recipient_id?: string } | undefined)?.recipient_id).toBe(person!.id);
    expect(rest.requests.some((r) => r.method === "POST" && r.path.endsWith(`/channels/${answer!.chat}/typing`))).toBe(true);
    const preview = await client.request("sessions.preview", { key: `dc:user:${person!.id}` });
    expect(preview.payload?.messages).toEqual([
      expect.objectContaining({ role: "assistant", body: "You said: hello over discord" }),
      expect.objectContaining({ role: "user", sender: person!.username, body: "hello over discord" }),
    ]);
  });

  it("Discord: a mention in a server thread is answered in that thread; an unmentioned message or another bot's is not", async () => {
    gateway.userWrites({ channelId: THREAD, guildId: GUILD, author: { id: person!.id, username: person!.username }, content: `<@${bot!.id}> thread question`, mentions: [bot!.id] });
    const [answer] = await delivered(rest, (d) => d.threadId === THREAD);
    expect(answer).toMatchObject({ chat: TEXT_CHANNEL, text: `You said: ${person!.username}: thread question` });
    expect(rest.requests.some((r) => r.method === "POST" && r.path.endsWith(`/channels/${THREAD}/typing`))).toBe(true);

    gateway.userWrites({ channelId: TEXT_CHANNEL, guildId: GUILD, author: { id: person!.id, username: person!.username }, content: "chatter in the channel" });
    // Another bot's mention is never answered (bots could answer each other for ever).
    gateway.userWrites({ channelId: TEXT_CHANNEL, guildId: GUILD, author: { id: "1500000000000000001", username: "otherbot", bot: true }, content: `<@${bot!.id}> from a bot`, mentions: [bot!.id] });
    // The session answers in order: once this is answered, the two before it were judged.
    gateway.userWrites({ channelId: TEXT_CHANNEL, guildId: GUILD, author: { id: person!.id, username: person!.username }, content: `<@${bot!.id}> in the channel itself`, mentions: [bot!.id] });
    await delivered(rest, (d) => d.chat === TEXT_CHANNEL && d.threadId === undefined);
    for (const unasked of ["chatter in the channel", "from a bot"]) expect(model.requests.filter((r) => JSON.stringify(r.body).includes(unasked))).toHaveLength(0);
  });

  it("Signal: a direct message from signal-cli's receive is answered to the sender, with typing meanwhile", async () => {
    signal.userWrites({ from: SIGNAL_PERSON, fromName: "Grace", text: "hello over signal" });
    const [answer] = await delivered(signal, (d) => d.chat === SIGNAL_PERSON);
    expect(answer).toMatchObject({ account: signalNumber, text: "You said: hello over signal" });
    expect(signal.typing).toContainEqual({ method: "PUT", account: signalNumber, recipient: SIGNAL_PERSON });
    // The indicator is hidden once the answer is out (Signal can, so it does not linger).
    const deadline = Date.now() + 5_000;
    const hidden = () => signal.typing.some((t) => t.method === "DELETE" && t.recipient === SIGNAL_PERSON);
    while (!hidden() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(signal.typing.filter((t) => t.recipient === SIGNAL_PERSON).at(-1)?.method).toBe("DELETE");
    const preview = await client.request("sessions.preview", { key: `sig:${SIGNAL_PERSON}` });
    expect(preview.payload?.messages).toEqual([
      expect.objectContaining({ role: "assistant", body: "You said: hello over signal" }),
      expect.objectContaining({ role: "user", sender: "Grace", body: "hello over signal" }),
    ]);
  });

  it("Signal: a mention in a group is answered in the group", async () => {
    signal.userWrites({ from: SIGNAL_PERSON, fromName: "Grace", text: "group question", groupId: SIGNAL_GROUP, mentions: [signalNumber!] });
    const group = `group.${Buffer.from(SIGNAL_GROUP, "utf8").toString("base64")}`;
    const [answer] = await delivered(signal, (d) => d.chat === group);
    expect(answer!.text).toBe("You said: Grace: group question");
  });

  it("Telegram long polling: a DM is answered in the DM, a mention in a forum topic in that topic", async () => {
    telegram.userWrites({ chatId: 4242, text: "hello over polling" });
    const [dm] = await delivered(telegram, (d) => d.chat === "4242");
    expect(dm!.text).toBe("You said: hello over polling");
    expect(telegram.requests.some((r) => r.path.endsWith("/sendChatAction") && (r.body as { chat_id?: unknown }).chat_id === "4242")).toBe(true);

    telegram.userWrites({ chatId: TG_FORUM, text: `@${tgBot!.username} topic question`, threadId: 77, from: { id: 7, first_name: "Topic" } });
    const [inTopic] = await delivered(telegram, (d) => d.chat === String(TG_FORUM));
    expect(inTopic).toMatchObject({ threadId: "77", text: "You said: Topic Person: topic question" });
  });

  it("attachments: a Discord file and a Signal picture without text reach the agent described", async () => {
    const cdn = "https://cdn.discordapp.com/attachments/1400000000000000007/1/diagram.png";
    const written = gateway.userWrites({
      channelId: DM_CHANNEL,
      author: { id: person!.id, username: person!.username },
      content: "see attached",
      attachments: [{ url: cdn, filename: "diagram.png", contentType: "image/png", size: 4_096 }],
    });
    const [dcAnswer] = await delivered(rest, (d) => d.text?.startsWith("You said: see attached") === true);
    // The fake names a message's first attachment <message id>0.
    expect(dcAnswer!.text).toBe(`You said: see attached\n[attachment: image "diagram.png", image/png, 4.0 KB, id ${written.id}0, ${cdn}]`);

    signal.userWrites({ from: "+15557770003", text: "", attachments: [{ id: "sig-att-1.jpg", contentType: "image/jpeg", size: 90_000 }] });
    const [sigAnswer] = await delivered(signal, (d) => d.chat === "+15557770003");
    expect(sigAnswer!.text).toBe("You said: [attachment: image, image/jpeg, 87.9 KB, id sig-att-1.jpg]");
  });

  it("a bot the Gateway refuses shows it in channels.status and stops nothing else", async () => {
    const deadline = Date.now() + 20_000;
    let refused: { lastError?: string | null } | undefined;
    while (Date.now() < deadline) {
      const status = await client.request("channels.status", {});
      const channels = status.payload?.channels as Array<{ id: string; accounts: Array<{ lastError?: string | null }> }>;
      refused = channels.find((c) => c.id === "dcrefused")?.accounts[0];
      if (refused?.lastError) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(refused?.lastError).toMatch(/^inbound: .*4004/);
    gateway.userWrites({ channelId: DM_CHANNEL, author: { id: person!.id, username: person!.username }, content: "still here?" });
    await delivered(rest, (d) => d.text === "You said: still here?");
  });

  it("a run that runs out of time gets the configured timeout reply, and the failure shows in channels.status", async () => {
    signal.userWrites({ from: "+15557770002", text: "please hang" });
    const [reply] = await delivered(signal, (d) => d.chat === "+15557770002", 1, 40_000);
    expect(reply!.text).toBe("That took too long; I stopped.");
    const status = await client.request("channels.status", {});
    const channels = status.payload?.channels as Array<{ id: string; accounts: Array<{ lastInboundError: string | null }> }>;
    expect(channels.find((c) => c.id === "sig")?.accounts[0]?.lastInboundError).toMatch(/TIMEOUT/);
  }, 60_000);
});
