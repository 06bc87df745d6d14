import {
  blueBubblesNewMessage,
  DEFAULT_SLACK_BOTS,
  freePort,
  signedSlackRequest,
  signedWhatsAppRequest,
  slackMessageEvent,
  slackUrlVerification,
  telegramUpdate,
  telegramWebhookRequest,
  whatsappMessageNotification,
  whatsappVerificationQuery,
} from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import {
  BB_PASSWORD,
  delivered,
  inboundAgents,
  inboundChannels,
  type InboundFakes,
  postWebhook,
  SLACK_SECRETS,
  sleep,
  startInboundFakes,
  TG_BOTS,
  TG_SECRET,
  WA_APP_SECRET,
  WA_NUMBER,
  WA_VERIFY,
} from "./fixtures/inbound.js";
import { WsClient } from "./fixtures/ws-client.js";

const botId = (i: number) => TG_BOTS[i]!.token.split(":")[0]!;
const [SLACK_ONE, SLACK_TWO] = DEFAULT_SLACK_BOTS as [(typeof DEFAULT_SLACK_BOTS)[0], (typeof DEFAULT_SLACK_BOTS)[0]];
const FORUM = -1001234567890;

describe.each(MODES)("inbound webhooks (%s)", (mode) => {
  let fakes: InboundFakes;
  let gw: GatewayUnderTest;
  let client: WsClient;
  let nextAddress = 10;
  /** A loopback source address of its own, so refused requests do not add up in the failed-auth limiter. */
  const address = () => `127.0.0.${nextAddress++}`;
  const telegram = (update: Record<string, unknown>, channel = "tg", secret: string | null = TG_SECRET, localAddress?: string) =>
    postWebhook(gw, `/api/channels/${channel}/webhook`, telegramWebhookRequest(update, secret ?? undefined), localAddress === undefined ? {} : { localAddress });
  const modelAsked = (text: string) => fakes.model.requests.filter((r) => JSON.stringify(r.body).includes(text)).length;

  beforeAll(async () => {
    fakes = await startInboundFakes();
    gw = await startGateway(mode, {
      ...inboundAgents(fakes),
      extraConfig: { channels: inboundChannels(fakes, await freePort()), delivery: { pacing: "off", sendTimeoutMs: 5_000, maxAttempts: 2 } },
    });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  });
  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await fakes?.close();
  });

  it("Telegram: an update in, the agent's answer out to the same chat, typing meanwhile, in session tg:<chat>", async () => {
    const res = await telegram(telegramUpdate({ chatId: 5001, from: { id: 5001, firstName: "Ada" }, text: "hello over telegram" }));
    expect(res.status).toBe(200);
    const [answer] = await delivered(fakes.telegram, (d) => d.chat === "5001" && d.account === botId(0));
    expect(answer!.text).toBe("You said: hello over telegram");
    expect(fakes.telegram.requests.some((r) => r.path.endsWith("/sendChatAction") && (r.body as { chat_id?: unknown }).chat_id === "5001")).toBe(true);
    const preview = await client.request("sessions.preview", { key: "tg:5001" });
    expect(preview.payload?.messages).toEqual([
      expect.objectContaining({ role: "assistant", body: "You said: hello over telegram" }),
      expect.objectContaining({ role: "user", sender: "Ada", body: "hello over telegram" }),
    ]);
  });

  it("Telegram: a mention in a forum topic is answered in that topic; an unmentioned group message is not", async () => {
    await telegram(telegramUpdate({ chatId: FORUM, from: { id: 5002, firstName: "Bo" }, text: `@${TG_BOTS[0]!.username} topic question`, topicId: 77 }));
    const [answer] = await delivered(fakes.telegram, (d) => d.chat === String(FORUM) && d.threadId === "77");
    expect(answer!.text).toBe("You said: Bo: topic question");
    await telegram(telegramUpdate({ chatId: FORUM, from: { id: 5002 }, text: "chatter nobody asked the bot about", topicId: 77 }));
    await sleep(1_500);
    expect(modelAsked("chatter nobody asked")).toBe(0);
  });

  it("Telegram: a wrong or missing secret token gets 401 and nothing is processed", async () => {
    const update = telegramUpdate({ chatId: 5003, from: { id: 5003 }, text: "forged update" });
    expect((await telegram(update, "tg", "wrong-secret", address())).status).toBe(401);
    expect((await telegram(update, "tg", null, address())).status).toBe(401);
    await sleep(1_000);
    expect(modelAsked("forged update")).toBe(0);
    expect(fakes.telegram.delivered.filter((d) => d.chat === "5003")).toEqual([]);
  });

  it("Slack: url_verification, a DM round trip, and a thread reply kept in its thread", async () => {
    const challenge = await postWebhook(gw, "/api/chatapp/events", signedSlackRequest(slackUrlVerification("ch4ll3nge"), SLACK_SECRETS[0]!));
    expect(challenge.status).toBe(200);
    expect(JSON.parse(challenge.body)).toEqual({ challenge: "ch4ll3nge" });

    const dm = slackMessageEvent({ channel: "D0DMUSER01", user: "U0FAKEUSER", text: "hello over slack", botUserId: SLACK_ONE.userId });
    expect((await postWebhook(gw, "/api/chatapp/events", signedSlackRequest(dm, SLACK_SECRETS[0]!))).status).toBe(200);
    const [answer] = await delivered(fakes.slack, (d) => d.chat === "D0DMUSER01");
    expect(answer).toMatchObject({ text: "You said: hello over slack", account: SLACK_ONE.userId });

    const threaded = slackMessageEvent({ type: "app_mention", channel: "C0FAKE0001", user: "U0FAKEUSER", text: `<@${SLACK_ONE.userId}> in a thread`, botUserId: SLACK_ONE.userId, threadTs: "1700000000.000001" });
    await postWebhook(gw, "/api/chatapp/events", signedSlackRequest(threaded, SLACK_SECRETS[0]!));
    const [reply] = await delivered(fakes.slack, (d) => d.chat === "C0FAKE0001" && d.threadId === "1700000000.000001");
    expect(reply!.text).toBe("You said: U0FAKEUSER: in a thread");
  });

  it("attachments: a Telegram photo and a Slack file reach the agent described (kind, type, size, id or URL), nothing downloaded", async () => {
    const photo = [
      { file_id: "AgACAgQ-thumb", file_unique_id: "t", width: 90, height: 60, file_size: 1_200 },
      { file_id: "AgACAgQ-full", file_unique_id: "f", width: 1280, height: 853, file_size: 120_000 },
    ];
    await telegram(telegramUpdate({ chatId: 5016, from: { id: 5016, firstName: "Ed" }, text: "what is in this picture", files: { photo } }));
    const [tgAnswer] = await delivered(fakes.telegram, (d) => d.chat === "5016");
    const described = "what is in this picture\n[attachment: image, image/jpeg, 117.2 KB, id AgACAgQ-full]";
    expect(tgAnswer!.text).toBe(`You said: ${described}`);
    const preview = await client.request("sessions.preview", { key: "tg:5016" });
    expect(preview.payload?.messages).toContainEqual(expect.objectContaining({ role: "user", body: described }));
    // Telegram's file URLs hold the bot token: neither the URL nor a getFile call happened.
    expect(fakes.telegram.requests.some((r) => r.path.endsWith("/getFile"))).toBe(false);

    const file = { id: "F0SHARED01", name: "notes.txt", mimetype: "text/plain", size: 2_048, url_private: "https://files.slack.com/files-pri/T0FAKE-F0SHARED01/notes.txt" };
    const event = slackMessageEvent({ channel: "D0DMUSER05", user: "U0FAKEUSER", text: "", botUserId: SLACK_ONE.userId, files: [file] });
    expect((await postWebhook(gw, "/api/chatapp/events", signedSlackRequest(event, SLACK_SECRETS[0]!))).status).toBe(200);
    const [slackAnswer] = await delivered(fakes.slack, (d) => d.chat === "D0DMUSER05");
    expect(slackAnswer!.text).toBe(`You said: [attachment: file "notes.txt", text/plain, 2.0 KB, id F0SHARED01, ${file.url_private}]`);
  });

  it("Slack: wrong, missing and stale signatures get 401 and nothing is processed", async () => {
    const event = slackMessageEvent({ channel: "D0DMUSER02", user: "U0FAKEUSER", text: "forged slack event", botUserId: SLACK_ONE.userId });
    const valid = signedSlackRequest(event, SLACK_SECRETS[0]!);
    const cases = [
      signedSlackRequest(event, "not-our-secret"),
      { ...valid, headers: { "content-type": "application/json" } },
      signedSlackRequest(event, SLACK_SECRETS[0]!, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 }),
      { ...valid, body: valid.body.replace("forged", "edited") },
    ];
    for (const signed of cases) expect((await postWebhook(gw, "/api/chatapp/events", signed, { localAddress: address() })).status).toBe(401);
    await sleep(1_000);
    expect(modelAsked("forged slack event") + modelAsked("edited slack event")).toBe(0);
    expect(fakes.slack.delivered.filter((d) => d.chat === "D0DMUSER02")).toEqual([]);
  });

  it("Slack: a retried event (X-Slack-Retry-Num) runs the agent once", async () => {
    const event = slackMessageEvent({ channel: "D0DMUSER03", user: "U0FAKEUSER", text: "retried slack event", botUserId: SLACK_ONE.userId });
    expect((await postWebhook(gw, "/api/chatapp/events", signedSlackRequest(event, SLACK_SECRETS[0]!))).status).toBe(200);
    for (const retryNum of [1, 2]) {
      expect((await postWebhook(gw, "/api/chatapp/events", signedSlackRequest(event, SLACK_SECRETS[0]!, { retryNum }))).status).toBe(200);
    }
    await delivered(fakes.slack, (d) => d.chat === "D0DMUSER03");
    // A retry after the answer went out is taken once too.
    await postWebhook(gw, "/api/chatapp/events", signedSlackRequest(event, SLACK_SECRETS[0]!, { retryNum: 3 }));
    await sleep(1_500);
    expect(fakes.slack.delivered.filter((d) => d.chat === "D0DMUSER03")).toHaveLength(1);
    expect(modelAsked("retried slack event")).toBe(1);
  });

  it("Slack: with two Slack apps, the signature decides which one answers", async () => {
    const event = slackMessageEvent({ channel: "D0DMUSER04", user: "U0FAKEUSER", text: "for the second app", botUserId: SLACK_TWO.userId });
    expect((await postWebhook(gw, "/api/chatapp/events", signedSlackRequest(event, SLACK_SECRETS[1]!))).status).toBe(200);
    const [answer] = await delivered(fakes.slack, (d) => d.chat === "D0DMUSER04");
    expect(answer!.account).toBe(SLACK_TWO.userId);
  });

  it("WhatsApp: the verification handshake, then a signed message answered with typing meanwhile; unsigned ones get 401", async () => {
    const handshake = await postWebhook(gw, `/api/channels/wa/webhook?${whatsappVerificationQuery(WA_VERIFY, "1158201444")}`, { headers: {}, body: "" }, { method: "GET" });
    expect(handshake).toMatchObject({ status: 200, body: "1158201444" });
    const wrong = await postWebhook(gw, `/api/channels/wa/webhook?${whatsappVerificationQuery("guess", "1")}`, { headers: {}, body: "" }, { method: "GET", localAddress: address() });
    expect(wrong.status).toBe(403);

    const messageId = "wamid.HBgLMTU1NTc2NTQzMjEVAgASGBQ";
    const note = whatsappMessageNotification({ phoneNumberId: WA_NUMBER.phoneNumberId, from: "15557654321", text: "hello over whatsapp", name: "Ada", id: messageId });
    expect((await postWebhook(gw, "/api/channels/wa/webhook", signedWhatsAppRequest(note, undefined), { localAddress: address() })).status).toBe(401);
    expect((await postWebhook(gw, "/api/channels/wa/webhook", signedWhatsAppRequest(note, WA_APP_SECRET))).status).toBe(200);
    const answers = await delivered(fakes.whatsapp, (d) => d.chat === "15557654321");
    expect(answers.map((d) => d.text)).toEqual(["You said: hello over whatsapp"]);
    // Typing hangs off the message being answered (WhatsApp marks it read, as any reply would).
    expect(fakes.whatsapp.reads).toContainEqual({ account: WA_NUMBER.phoneNumberId, messageId, typing: true });
  });

  it("iMessage: a BlueBubbles new-message webhook with the password is answered in the same chat", async () => {
    const chatGuid = "iMessage;-;+15559876543";
    const event = blueBubblesNewMessage({ chatGuid, from: "+15559876543", text: "hello over imessage" });
    const body = { headers: { "content-type": "application/json" }, body: JSON.stringify(event) };
    expect((await postWebhook(gw, "/api/channels/imsg/webhook?password=wrong", body, { localAddress: address() })).status).toBe(401);
    expect((await postWebhook(gw, `/api/channels/imsg/webhook?password=${encodeURIComponent(BB_PASSWORD)}`, body)).status).toBe(200);
    const [answer] = await delivered(fakes.bluebubbles, (d) => d.chat === chatGuid);
    expect(answer!.text).toBe("You said: hello over imessage");
  });

  it("pairing: an unknown sender gets a code, a control client approves it, and the sender is answered", async () => {
    await telegram(telegramUpdate({ chatId: 5010, from: { id: 5010, firstName: "Cy" }, text: "may I talk to the agent?" }), "tgpair");
    const [codeMessage] = await delivered(fakes.telegram, (d) => d.chat === "5010" && d.account === botId(1));
    const code = /pairing code is ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(codeMessage!.text ?? "")?.[1];
    expect(code).toBeDefined();
    expect(modelAsked("may I talk to the agent")).toBe(0);

    const listed = await client.request("channels.pairing.list", { channel: "tgpair" });
    expect(listed.payload?.requests).toEqual([expect.objectContaining({ channel: "tgpair", accountId: "default", sender: "5010", senderName: "Cy", code })]);
    expect((await client.request("channels.pairing.approve", { channel: "tgpair", code: "NOPE-NOPE" })).error?.code).toBe("NOT_FOUND");
    const approved = await client.request("channels.pairing.approve", { channel: "tgpair", code: code!.toLowerCase() });
    expect(approved.payload).toMatchObject({ approved: true, sender: "5010" });
    await delivered(fakes.telegram, (d) => d.chat === "5010" && /approved/.test(d.text ?? ""));
    expect((await client.request("channels.pairing.list", {})).payload?.requests).toEqual([]);

    await telegram(telegramUpdate({ chatId: 5010, from: { id: 5010, firstName: "Cy" }, text: "now may I?" }), "tgpair");
    await delivered(fakes.telegram, (d) => d.chat === "5010" && d.text === "You said: now may I?");
  });

  it("allowlist: an allowlisted sender is answered, another is not", async () => {
    await telegram(telegramUpdate({ chatId: 5011, from: { id: 5011 }, text: "not on the list" }), "tgallow");
    await telegram(telegramUpdate({ chatId: 4242, from: { id: 4242 }, text: "on the list" }), "tgallow");
    await delivered(fakes.telegram, (d) => d.chat === "4242" && d.account === botId(2) && d.text === "You said: on the list");
    await sleep(500);
    expect(modelAsked("not on the list")).toBe(0);
    expect(fakes.telegram.delivered.filter((d) => d.chat === "5011")).toEqual([]);
  });

  it("five messages sent while a slow run is going are all answered, in order", async () => {
    await telegram(telegramUpdate({ chatId: 5012, from: { id: 5012 }, text: "first pause2000" }));
    await sleep(300);
    for (let i = 1; i <= 5; i++) await telegram(telegramUpdate({ chatId: 5012, from: { id: 5012 }, text: `queued ${i}` }));
    const answers = await delivered(fakes.telegram, (d) => d.chat === "5012", 6, 30_000);
    expect(answers.map((d) => d.text)).toEqual(["You said: first pause2000", ...[1, 2, 3, 4, 5].map((i) => `You said: queued ${i}`)]);
  });

  it("a failed run gets the short failure reply in the same chat and thread, and the failure is logged", async () => {
    await telegram(telegramUpdate({ chatId: FORUM, from: { id: 5015, firstName: "Di" }, text: `@${TG_BOTS[0]!.username} please fail500`, topicId: 78 }));
    const [reply] = await delivered(fakes.telegram, (d) => d.chat === String(FORUM) && d.threadId === "78");
    expect(reply!.text).toBe("Sorry, something went wrong and I could not answer that. Please try again in a moment.");
    expect(modelAsked("please fail500")).toBeGreaterThan(0);
    const deadline = Date.now() + 10_000;
    while (!/the agent's run for an inbound message failed/.test(gw.fullLogs()) && Date.now() < deadline) await sleep(100);
    expect(gw.fullLogs()).toMatch(/"error":"MODEL_ERROR: [^"]*"[^\n]*"replied":true[^\n]*the agent's run for an inbound message failed/);
    expect(fakes.telegram.delivered.filter((d) => d.chat === String(FORUM) && d.threadId === "78")).toHaveLength(1);
  });

  it("one channel's failures stay its own: they show in its channels.status and the others keep answering", async () => {
    // tgdown's platform is down: its answer cannot be sent. Malformed and forged requests hit tg.
    await telegram(telegramUpdate({ chatId: 5013, from: { id: 5013 }, text: "to a bot whose platform is down" }), "tgdown");
    expect((await postWebhook(gw, "/api/channels/tg/webhook", { headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": TG_SECRET }, body: "{broken" }, { localAddress: address() })).status).toBe(400);
    expect((await postWebhook(gw, "/api/channels/nowhere/webhook", { headers: {}, body: "{}" }, { localAddress: address() })).status).toBe(404);
    await telegram(telegramUpdate({ chatId: 5014, from: { id: 5014 }, text: "still answered" }));
    await delivered(fakes.telegram, (d) => d.chat === "5014" && d.text === "You said: still answered");

    const deadline = Date.now() + 20_000;
    let accounts: Record<string, Record<string, unknown>> = {};
    while (Date.now() < deadline) {
      const status = await client.request("channels.status", {});
      const channels = status.payload?.channels as Array<{ id: string; accounts: Array<Record<string, unknown>> }>;
      accounts = Object.fromEntries(channels.map((c) => [c.id, c.accounts[0]!]));
      if (accounts.tgdown?.lastInboundError !== null && accounts.tg?.lastInboundError !== null) break;
      await sleep(250);
    }
    expect(accounts.tgdown).toMatchObject({ lastInboundAt: expect.any(Number), lastInboundError: expect.stringMatching(/cannot answer/) });
    expect(accounts.tg).toMatchObject({ lastInboundAt: expect.any(Number), lastInboundError: expect.stringMatching(/400/) });
    expect(accounts.imsg?.lastInboundError).toMatch(/401/);
    // The channels nothing went wrong on show none of it.
    expect(accounts.tgallow).toMatchObject({ lastInboundAt: expect.any(Number), lastInboundError: null });
  });
});
