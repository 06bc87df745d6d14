/**
 * Polling and gateway receivers across two delivery replicas (distributed mode): exactly one
 * Telegram poller and one Discord Gateway connection exist, counted at the fakes; kill -9 of
 * the replica that holds them hands both to the other within a bound, and nothing handled
 * before the kill comes again: every message is answered once, in order, by the agent
 * (builtin/echo answers with the message itself), counted at the fakes.
 */
import { connectNats } from "@gw/bus";
import { createJetStreamDurableStore } from "@gw/store";
import { DEFAULT_DISCORD_BOTS, DEFAULT_DISCORD_USERS, DEFAULT_TELEGRAM_BOTS, type FakeDiscord, type FakeDiscordGateway, type FakeTelegram, startFakeDiscord, startFakeDiscordGateway, startFakeTelegram, waitUntil } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGateway } from "./fixtures/gateway.js";
import { waitOutput } from "./fixtures/processes.js";

const [tgBot] = DEFAULT_TELEGRAM_BOTS;
const [dcBot] = DEFAULT_DISCORD_BOTS;
const [person] = DEFAULT_DISCORD_USERS;
const TG_CHAT = 4242;
const DM_CHANNEL = "1400000000000000009";
/** The receivers' default lease (10 s) plus one acquire round (at most 3 s) and a connect. */
const TAKEOVER_BOUND_MS = 15_000;

const holds = (channel: string) => new RegExp(`"channel":"${channel}"[^\\n]*holds the lease`);

describe("inbound receivers across two delivery replicas (distributed)", () => {
  let tg: FakeTelegram;
  let rest: FakeDiscord;
  let gateway: FakeDiscordGateway;
  let gw: GatewayUnderTest;

  /** The agent's answers posted to each chat at the fakes (builtin/echo answers with the message). */
  const handled = (channel: "tg" | "dc"): string[] => {
    return channel === "tg"
      ? tg.delivered.filter((d) => d.chat === String(TG_CHAT)).map((d) => d.text ?? "")
      : rest.delivered.filter((d) => d.account === dcBot!.id).map((d) => d.text ?? "");
  };

  /** The Discord session's `s` stored as the receiver's cursor, read from JetStream. */
  const storedDiscordSeq = async (): Promise<number> => {
    const nc = await connectNats({ url: gw.nats!.url });
    try {
      const kv = await createJetStreamDurableStore(nc).kv("inbound_cursors");
      const entry = await kv.get("inbound:receiver:dc:default");
      if (entry === null) return -1;
      const record = JSON.parse(Buffer.from(entry.value).toString("utf8")) as { cursor?: string };
      return record.cursor === undefined ? -1 : (JSON.parse(record.cursor) as { seq: number }).seq;
    } finally {
      await nc.close();
    }
  };

  beforeAll(async () => {
    tg = await startFakeTelegram();
    rest = await startFakeDiscord({ channels: [{ id: DM_CHANNEL, type: 1 }] });
    gateway = await startFakeDiscordGateway({ bots: DEFAULT_DISCORD_BOTS, heartbeatIntervalMs: 5_000 });
    const channels = {
      tg: { kind: "telegram", botToken: tgBot!.token, apiBaseUrl: tg.baseUrl, inbound: "polling", dmPolicy: "allowlist", allowFrom: [String(TG_CHAT)] },
      dc: { kind: "discord", botToken: dcBot!.token, apiBaseUrl: rest.baseUrl, gatewayUrl: gateway.url, dmPolicy: "allowlist", allowFrom: [person!.id] },
    };
    gw = await startGateway("distributed", {
      deliveryReplicas: 1,
      extraConfig: { channels },
    });
    // The first replica takes both accounts before the second exists, so one kill moves both.
    await waitOutput(gw.delivery![0]!, holds("tg"));
    await waitOutput(gw.delivery![0]!, holds("dc"));
    await gw.addDeliveryReplica!();
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
    await Promise.all([tg?.close(), rest?.close(), gateway?.close()]);
  });

  it("polls Telegram and holds the Discord Gateway once, hands both over on kill -9, and replays nothing handled", async () => {
    const [first, second] = gw.delivery!;
    const write = (i: number) => {
      const update = tg.userWrites({ chatId: TG_CHAT, text: `telegram ${i}` });
      const dm = gateway.userWrites({ channelId: DM_CHANNEL, author: { id: person!.id, username: person!.username }, content: `discord ${i}` });
      return { updateId: update.update_id, seq: Math.max(...dm.seqs) };
    };

    // Before the kill: five messages on each platform, handled by the first replica.
    const before = Array.from({ length: 5 }, (_, i) => write(i));
    await waitUntil(() => handled("tg").length === 5 && handled("dc").length === 5, { what: "the first five handled", timeoutMs: 20_000 });
    const lastUpdate = before.at(-1)!.updateId;
    const lastSeq = before.at(-1)!.seq;
    // Handled means stored and its cursor moved: Telegram sees the confirming offset, JetStream the seq.
    await waitUntil(() => tg.pollStats().offsets.includes(lastUpdate + 1), { what: "telegram offset past the fifth update", timeoutMs: 20_000 });
    await waitUntil(async () => (await storedDiscordSeq()) >= lastSeq, { what: "discord cursor past the fifth message", timeoutMs: 20_000 });
    expect(second!.output()).not.toMatch(holds("tg"));
    expect(second!.output()).not.toMatch(holds("dc"));
    const offsetsBefore = tg.pollStats().offsets.length;

    const killedAt = Date.now();
    await first!.kill("SIGKILL");
    await waitOutput(second!, holds("tg"), TAKEOVER_BOUND_MS);
    await waitOutput(second!, holds("dc"), TAKEOVER_BOUND_MS);
    await waitUntil(() => tg.pollStats().offsets.length > offsetsBefore && gateway.stats.resumed === 1, { what: "the survivor polls and resumed", timeoutMs: TAKEOVER_BOUND_MS });
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(TAKEOVER_BOUND_MS);

    // The survivor goes on from the stored cursors: Telegram's next offset, Discord's session.
    expect(tg.pollStats().offsets.slice(offsetsBefore).every((o) => o === lastUpdate + 1)).toBe(true);
    expect(gateway.stats).toMatchObject({ identifies: 1, resumes: 1, resumed: 1 });
    expect(gateway.stats.resumeSeqs[0]).toBeGreaterThanOrEqual(lastSeq);

    // After it: five more each, handled by the survivor.
    for (let i = 5; i < 10; i++) write(i);
    await waitUntil(() => handled("tg").length >= 10 && handled("dc").length >= 10, { what: "all ten handled", timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 1_000));
    const expected = (prefix: string) => Array.from({ length: 10 }, (_, i) => `${prefix} ${i}`);
    expect(handled("tg")).toEqual(expected("telegram"));
    expect(handled("dc")).toEqual(expected("discord"));

    // Exactly one poller and one Gateway connection the whole time.
    expect(tg.pollStats()).toMatchObject({ maxActive: 1, conflicts: 0 });
    expect(gateway.stats.maxOpen).toBe(1);
    expect(gateway.stats.open).toBe(1);
    console.info(`inbound receivers: takeover after kill -9 in ${takeoverMs} ms (bound ${TAKEOVER_BOUND_MS} ms)`);
  }, 120_000);
});
