/**
 * Routing bindings end to end in both modes (issue 26 §2): on one Telegram bot, a binding per
 * peer, one per group and one per forum topic send their chats to different agents than the
 * channel's own, a binding's dmPolicy opens one person's chat on a pairing channel; on Slack a
 * peer given as a user id routes that person's direct chat (whose id differs) and not their
 * messages in a channel; channels.status and the CLI tell which binding answered each chat's
 * last message; `config check` refuses dead bindings and warns about overlapping ones.
 */
import {
  DEFAULT_SLACK_BOTS,
  DEFAULT_TELEGRAM_BOTS,
  DEFAULT_TELEGRAM_CHATS,
  type FakeModelServer,
  type FakeSlack,
  type FakeTelegram,
  signedSlackRequest,
  slackMessageEvent,
  startFakeModelServer,
  startFakeSlack,
  startFakeTelegram,
} from "@gw/testing";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { delivered, postWebhook } from "./fixtures/inbound.js";
import { runToExit } from "./fixtures/processes.js";
import { WsClient } from "./fixtures/ws-client.js";

const CLI = "services/gateway/src/cli.ts";
const [tgBot] = DEFAULT_TELEGRAM_BOTS;
const [slackBot] = DEFAULT_SLACK_BOTS;
const SLACK_SECRET = "slack-bindings-signing-secret";
/** The fake Slack's person, and their direct chat with the bot (a chat id unlike the user id). */
const SLACK_USER = "U0FAKEUSER";
const SLACK_DM = "D0DMUSER01";
const SLACK_CHANNEL = "C0FAKE0001";
const FORUM = -1001234567890;
/** Bound to the personal agent, with dmPolicy open. */
const PERSON = 4242;
/** On the channel's allowFrom: the channel's own agent answers. */
const KNOWN = 5001;
/** Nobody: the channel's pairing policy applies. */
const STRANGER = 5002;

interface RouteView {
  chat: string;
  threadId: string | null;
  agentId: string;
  binding: number | null;
  at: number;
}

describe.each(MODES)("inbound routing bindings (%s)", (mode) => {
  let model: FakeModelServer;
  let telegram: FakeTelegram;
  let slack: FakeSlack;
  let gw: GatewayUnderTest;
  let client: WsClient;

  beforeAll(async () => {
    [model, telegram, slack] = await Promise.all([
      startFakeModelServer(),
      startFakeTelegram({ chats: [...DEFAULT_TELEGRAM_CHATS, { id: KNOWN, type: "private" }, { id: STRANGER, type: "private" }] }),
      startFakeSlack(),
    ]);
    gw = await startGateway(mode, {
      // The channel's agent and the support desk answer with the fake model ("You said: ..."),
      // the personal assistant with builtin/echo (the message itself): answers tell them apart.
      agents: [
        { id: "main", name: "Main", model: "fake/model" },
        { id: "support", name: "Support", model: "fake/model" },
        { id: "personal", name: "Personal", model: "builtin/echo" },
      ],
      models: { providers: { fake: { kind: "openai", baseUrl: model.baseUrl, apiKey: "sk-fake", timeoutMs: 15_000 } } },
      extraConfig: {
        channels: {
          tg: { kind: "telegram", botToken: tgBot!.token, apiBaseUrl: telegram.baseUrl, inbound: "polling", allowFrom: [String(KNOWN)], agent: "main" },
          // Answers nobody unless a binding opens a chat.
          sl: { kind: "slack", botToken: slackBot!.token, signingSecret: SLACK_SECRET, apiBaseUrl: slack.baseUrl, dmPolicy: "allowlist" },
        },
        bindings: [
          { match: { channel: "tg", peer: String(PERSON) }, agentId: "personal", dmPolicy: "open" },
          { match: { channel: "tg", group: String(FORUM) }, agentId: "support", dmPolicy: "open" },
          { match: { channel: "tg", group: String(FORUM), thread: "77" }, agentId: "personal", dmPolicy: "open" },
          { match: { channel: "sl", peer: SLACK_USER }, agentId: "personal", dmPolicy: "open" },
          { match: { channel: "sl", group: SLACK_CHANNEL }, agentId: "support", dmPolicy: "open" },
        ],
        delivery: { pacing: "off" },
      },
    });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await Promise.all([model?.close(), telegram?.close(), slack?.close()]);
  });

  async function sessionAgent(key: string): Promise<string | undefined> {
    const list = await client.request("sessions.list", {});
    const sessions = list.payload?.sessions as Array<{ key: string; agentId: string }>;
    return sessions.find((s) => s.key === key)?.agentId;
  }

  it("a peer binding sends one person's chat to its agent, open without pairing on a pairing channel", async () => {
    telegram.userWrites({ chatId: PERSON, text: "remind me at six" });
    const [answer] = await delivered(telegram, (d) => d.chat === String(PERSON));
    // builtin/echo: the personal agent, not the channel's (which would say "You said: ...").
    expect(answer!.text).toBe("remind me at six");
    expect(answer!.text).not.toMatch(/code/);
    expect(await sessionAgent(`tg:${PERSON}`)).toBe("personal");
  });

  it("a group binding sends the group to another agent, and a topic binding one topic of it to a third", async () => {
    telegram.userWrites({ chatId: FORUM, text: `@${tgBot!.username} the printer is down` });
    const [inGroup] = await delivered(telegram, (d) => d.chat === String(FORUM) && d.threadId === undefined);
    expect(inGroup!.text).toMatch(/^You said: .*the printer is down$/);
    expect(await sessionAgent(`tg:${FORUM}`)).toBe("support");

    telegram.userWrites({ chatId: FORUM, threadId: 77, text: `@${tgBot!.username} plan my week` });
    const [inTopic] = await delivered(telegram, (d) => d.chat === String(FORUM) && d.threadId === "77");
    expect(inTopic!.text).toMatch(/^(?!You said).*plan my week$/);
    expect(await sessionAgent(`tg:${FORUM}:thread:77`)).toBe("personal");
  });

  it("Slack: a peer given as the user id routes their direct chat, not their messages in a channel", async () => {
    const post = (event: Record<string, unknown>) => postWebhook(gw, "/api/chatapp/events", signedSlackRequest(event, SLACK_SECRET));
    expect((await post(slackMessageEvent({ channel: SLACK_DM, user: SLACK_USER, text: "book a table", botUserId: slackBot!.userId }))).status).toBe(200);
    const [dm] = await delivered(slack, (d) => d.chat === SLACK_DM);
    expect(dm!.text).toBe("book a table");
    expect(await sessionAgent(`sl:${SLACK_DM}`)).toBe("personal");

    const mention = slackMessageEvent({ type: "app_mention", channel: SLACK_CHANNEL, user: SLACK_USER, text: `<@${slackBot!.userId}> the build is red`, botUserId: slackBot!.userId });
    expect((await post(mention)).status).toBe(200);
    const [inChannel] = await delivered(slack, (d) => d.chat === SLACK_CHANNEL);
    expect(inChannel!.text).toBe(`You said: ${SLACK_USER}: the build is red`);
    expect(await sessionAgent(`sl:${SLACK_CHANNEL}`)).toBe("support");
  });

  it("chats no binding matches keep the channel's agent and dmPolicy", async () => {
    telegram.userWrites({ chatId: KNOWN, text: "hello channel" });
    const [known] = await delivered(telegram, (d) => d.chat === String(KNOWN));
    expect(known!.text).toBe("You said: hello channel");
    expect(await sessionAgent(`tg:${KNOWN}`)).toBe("main");

    telegram.userWrites({ chatId: STRANGER, text: "who are you" });
    const [code] = await delivered(telegram, (d) => d.chat === String(STRANGER));
    expect(code!.text).toMatch(/pairing code/);
    expect(model.requests.filter((r) => JSON.stringify(r.body).includes("who are you"))).toHaveLength(0);
  });

  it("channels.status shows which binding answered each chat's last message", async () => {
    const status = await client.request("channels.status", {});
    const channels = status.payload?.channels as Array<{ id: string; accounts: Array<{ lastRoutes: RouteView[] }> }>;
    const routes = channels.find((c) => c.id === "tg")?.accounts[0]?.lastRoutes ?? [];
    const view = (r: RouteView) => ({ chat: r.chat, threadId: r.threadId, agentId: r.agentId, binding: r.binding });
    expect(routes.map(view)).toEqual([
      { chat: String(KNOWN), threadId: null, agentId: "main", binding: null },
      { chat: String(FORUM), threadId: "77", agentId: "personal", binding: 2 },
      { chat: String(FORUM), threadId: null, agentId: "support", binding: 1 },
      { chat: String(PERSON), threadId: null, agentId: "personal", binding: 0 },
    ]);
    expect(routes.every((r) => r.at > 0)).toBe(true);

    const cli = await runToExit(CLI, ["channels", "status"], { GATEWAY_URL: gw.httpUrl(), GATEWAY_TOKEN: TOKEN, NO_COLOR: "1" });
    expect(cli.code).toBe(0);
    expect(cli.output).toMatch(/ROUTED BY/);
    expect(cli.output).toMatch(new RegExp(`tg +default +${FORUM} +77 +personal +bindings\\[2\\]`));
    expect(cli.output).toMatch(new RegExp(`tg +default +${KNOWN} +- +main +channel default`));
  });
});

describe("gateway config check with bindings", () => {
  const dir = mkdtempSync(join(tmpdir(), "gw-bindings-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const base = `agents: { list: [{ id: "main", name: "Main", model: "builtin/echo" }, { id: "desk", name: "Desk", model: "builtin/echo" }] },
    channels: { tg: { kind: "telegram", botToken: "1:x", accounts: { a: {}, b: {} } } }`;

  it("warns about overlapping bindings and still accepts the file", async () => {
    const path = join(dir, "overlap.json5");
    writeFileSync(
      path,
      `{ ${base}, bindings: [{ match: { channel: "tg", accountId: "a", peer: "42" }, agentId: "desk" }, { match: { channel: "tg", peer: "42" }, agentId: "main" }] }`,
    );
    const human = await runToExit(CLI, ["config", "check", "--config", path]);
    expect(human.code).toBe(0);
    expect(human.output).toMatch(/OK/);
    expect(human.output).toContain("warning: bindings[1]: overlaps bindings[0] (both peer bindings)");
    const json = await runToExit(CLI, ["config", "check", "--json", "--config", path]);
    expect(JSON.parse(json.output.slice(json.output.indexOf("{")))).toMatchObject({ ok: true, warnings: [{ path: "bindings[1]" }] });
  });

  it("refuses a binding that can never answer, names what does not exist, and refuses a queue that is not an object, with key paths", async () => {
    const cases: Array<[string, string[]]> = [
      [
        `{ match: { channel: "tg", peer: "42" }, agentId: "desk" }, { match: { channel: "tg", peer: "42" }, agentId: "main" }`,
        ["bindings[1]: never answers: bindings[0] matches every message it matches"],
      ],
      [
        `{ match: { channel: "tg", accountId: "c" }, agentId: "ghost" }, { match: { channel: "nope" }, agentId: "main" }`,
        ['bindings[0].agentId: "ghost" is not an agent in agents.list', 'bindings[0].match.accountId: channel "tg" has no account "c" (accounts: a, b)', 'bindings[1].match.channel: "nope" is not a configured channel'],
      ],
      [`{ match: { channel: "tg" }, agentId: "main", queue: "collect" }`, ["bindings[0].queue"]],
    ];
    for (const [i, [bindings, expected]] of cases.entries()) {
      const path = join(dir, `refused-${i}.json5`);
      writeFileSync(path, `{ ${base}, bindings: [${bindings}] }`);
      const res = await runToExit(CLI, ["config", "check", "--config", path]);
      expect(res.code).toBe(1);
      for (const text of expected) expect(res.output).toContain(text);
    }
  });
});
