import {
  blueBubblesNewMessage,
  DEFAULT_BLUEBUBBLES_SERVERS,
  DEFAULT_DISCORD_BOTS,
  DEFAULT_DISCORD_USERS,
  DEFAULT_MEDIA_FILES,
  DEFAULT_SIGNAL_ACCOUNTS,
  DEFAULT_SLACK_BOTS,
  DEFAULT_TELEGRAM_BOTS,
  DEFAULT_WHATSAPP_NUMBERS,
  DEFAULT_TELEGRAM_CHATS,
  type FakeBlueBubbles,
  type FakeDiscord,
  type FakeDiscordGateway,
  type FakeMediaServer,
  type FakeModelServer,
  type FakeSignal,
  type FakeSlack,
  type FakeTelegram,
  type FakeWhatsApp,
  startFakeBlueBubbles,
  startFakeDiscord,
  startFakeDiscordGateway,
  startFakeMediaServer,
  startFakeModelServer,
  startFakeSignal,
  startFakeSlack,
  signedSlackRequest,
  slackMessageEvent,
  startFakeTelegram,
  startFakeWhatsApp,
  signedWhatsAppRequest,
  waitUntil,
  whatsappMessageNotification,
} from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { postWebhook } from "./fixtures/inbound.js";
import { WsClient } from "./fixtures/ws-client.js";

const [bot] = DEFAULT_TELEGRAM_BOTS;
const [dcBot] = DEFAULT_DISCORD_BOTS;
const [person] = DEFAULT_DISCORD_USERS;
const DM_CHANNEL = "1400000000000000011";
const [signalNumber] = DEFAULT_SIGNAL_ACCOUNTS;
const SIGNAL_PERSON = "+15557770042";
const [bbServer] = DEFAULT_BLUEBUBBLES_SERVERS;
const IMESSAGE_CHAT = "iMessage;-;+15559870042";
const [waNumber] = DEFAULT_WHATSAPP_NUMBERS;
const WA_SECRET = "wa-app-secret-photos";
const WA_PERSON = "15557650042";
const [slackBot] = DEFAULT_SLACK_BOTS;
const SLACK_SECRET = "slack-signing-secret-photos";
const SLACK_DM = "D0DMPHOTO1";
const ECHO_CHAT = 4242;
const VISION_CHAT = 4343;
const MAX_MEDIA = 4_096;
/** JPEG magic, then filler: what matters to the gateway is that the bytes say JPEG. */
const jpeg = (size: number) => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(size - 4, 0x41)]);

interface PreviewMessage {
  role: string;
  body: string;
  attachments?: unknown;
}

/**
 * Photos people send on Telegram (issue 25 §2): fetched with getFile through the account's
 * client, handed to the agent as images (builtin/echo describes them; an OpenAI-kind model gets
 * image_url parts), kept with the session's message (sessions.preview shows the attachment).
 * An oversize or non-image file gets a reply saying so, and nothing runs or is stored.
 */
describe.each(MODES)("inbound photos (%s)", (mode) => {
  let tg: FakeTelegram;
  let model: FakeModelServer;
  let rest: FakeDiscord;
  let discord: FakeDiscordGateway;
  let media: FakeMediaServer;
  let signal: FakeSignal;
  let bluebubbles: FakeBlueBubbles;
  let whatsapp: FakeWhatsApp;
  let slack: FakeSlack;
  let gw: GatewayUnderTest;
  let client: WsClient;

  const answers = (chat: number) => tg.delivered.filter((d) => d.chat === String(chat)).map((d) => d.text ?? "");
  const preview = async (chat: number | string): Promise<PreviewMessage[]> => {
    const res = await client.request("sessions.preview", { key: typeof chat === "number" ? `tg:${chat}` : chat });
    return res.ok ? (res.payload as { messages: PreviewMessage[] }).messages : [];
  };

  beforeAll(async () => {
    tg = await startFakeTelegram({ chats: [...DEFAULT_TELEGRAM_CHATS, { id: VISION_CHAT, type: "private" }] });
    model = await startFakeModelServer();
    rest = await startFakeDiscord({ channels: [{ id: DM_CHANNEL, type: 1 }] });
    discord = await startFakeDiscordGateway({ bots: [dcBot!], heartbeatIntervalMs: 5_000 });
    media = await startFakeMediaServer();
    // signal-cli's "normal" mode: the receiver polls /v1/receive.
    signal = await startFakeSignal({ mode: "normal" });
    bluebubbles = await startFakeBlueBubbles();
    whatsapp = await startFakeWhatsApp();
    slack = await startFakeSlack();
    const channels = {
      tg: { kind: "telegram", botToken: bot!.token, apiBaseUrl: tg.baseUrl, inbound: "polling", dmPolicy: "allowlist", allowFrom: [String(ECHO_CHAT), String(VISION_CHAT)] },
      dc: { kind: "discord", botToken: dcBot!.token, apiBaseUrl: rest.baseUrl, gatewayUrl: discord.url, dmPolicy: "open" },
      sig: { kind: "signal", bridgeUrl: signal.baseUrl, number: signalNumber, dmPolicy: "open" },
      imsg: { kind: "imessage", bridgeUrl: bluebubbles.baseUrl, password: bbServer!.password, dmPolicy: "open" },
      slack: { kind: "slack", botToken: slackBot!.token, signingSecret: SLACK_SECRET, apiBaseUrl: slack.baseUrl, dmPolicy: "open" },
      wa: { kind: "whatsapp", accessToken: waNumber!.accessToken, phoneNumberId: waNumber!.phoneNumberId, apiBaseUrl: whatsapp.baseUrl, appSecret: WA_SECRET, dmPolicy: "open" },
    };
    gw = await startGateway(mode, {
      agents: [
        { id: "main", name: "Main", model: "builtin/echo" },
        { id: "eyes", name: "Eyes", model: "vision/gpt-vision" },
      ],
      models: { providers: { vision: { kind: "openai", baseUrl: model.baseUrl, apiKey: "sk-fake", input: ["text", "image"] } } },
      extraConfig: {
        channels,
        bindings: [{ match: { channel: "tg", peer: String(VISION_CHAT) }, agentId: "eyes" }],
        // The fake media server (Discord's "CDN" here) is on loopback.
        delivery: { inbound: { maxMediaBytes: MAX_MEDIA }, media: { allowPrivateNetworks: true } },
      },
    });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  }, 120_000);
  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await Promise.all([tg?.close(), model?.close(), rest?.close(), discord?.close(), media?.close(), signal?.close(), bluebubbles?.close(), whatsapp?.close(), slack?.close()]);
  });

  it("a photo reaches the agent as an image, and the preview shows the message with its attachment", async () => {
    const photo = jpeg(1_500);
    tg.userWrites({ chatId: ECHO_CHAT, text: "what is this?", file: { kind: "photo", bytes: photo } });
    await waitUntil(() => answers(ECHO_CHAT).length === 1, { what: "the answer to the photo", timeoutMs: 20_000 });
    expect(answers(ECHO_CHAT)[0]).toBe(`what is this?\n[image: image/jpeg, ${photo.byteLength} bytes]`);
    expect(tg.fileDownloads).toHaveLength(1);
    const user = (await preview(ECHO_CHAT)).find((m) => m.role === "user");
    expect(user).toMatchObject({ body: "what is this?", attachments: [{ type: "image", mimeType: "image/jpeg", size: photo.byteLength }] });
  });

  it("a photo reaches an OpenAI-kind model as an image_url part", async () => {
    const photo = jpeg(900);
    tg.userWrites({ chatId: VISION_CHAT, text: "look at this", file: { kind: "photo", bytes: photo } });
    await waitUntil(() => answers(VISION_CHAT).length === 1, { what: "the vision agent's answer", timeoutMs: 20_000 });
    expect(answers(VISION_CHAT)[0]).toBe("You said: look at this");
    const sent = model.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(sent.messages.find((m) => m.role === "user")?.content).toEqual([
      { type: "text", text: "look at this" },
      { type: "image_url", image_url: { url: `data:image/jpeg;base64,${photo.toString("base64")}` } },
    ]);
  });

  it.each([
    ["an oversize photo, refused before any download", { kind: "photo" as const, bytes: jpeg(MAX_MEDIA + 100) }, /is 4 KB.*smaller image/, 0],
    ["a photo larger than the update said, refused at getFile's size", { kind: "photo" as const, bytes: jpeg(MAX_MEDIA + 100), statedSize: 100 }, /is larger/, 0],
    ["a document that is not an image", { kind: "document" as const, bytes: Buffer.from("%PDF-1.4"), mimeType: "application/pdf", name: "report.pdf" }, /"report\.pdf" is not one/, 0],
    ["a photo whose bytes are not an image", { kind: "photo" as const, bytes: Buffer.from("<html>not an image</html>") }, /is not one/, 1],
  ])("%s: a clear reply, no run, nothing stored", async (_what, file, reply, downloads) => {
    const chat = ECHO_CHAT;
    const before = { answers: answers(chat).length, messages: (await preview(chat)).length, downloads: tg.fileDownloads.length };
    tg.userWrites({ chatId: chat, text: "", file });
    await waitUntil(() => answers(chat).length === before.answers + 1, { what: "the refusal", timeoutMs: 20_000 });
    const answer = answers(chat).at(-1)!;
    expect(answer).toMatch(/^I can read images \(PNG, JPEG, GIF, WEBP\) of up to 4 KB/);
    expect(answer).toMatch(reply);
    expect(tg.fileDownloads.length - before.downloads).toBe(downloads);
    expect(await preview(chat)).toHaveLength(before.messages);
  });

  it("Discord: an image attachment is read from its URL and reaches the agent as an image; a PDF is refused", async () => {
    const author = { id: person!.id, username: person!.username };
    const png = DEFAULT_MEDIA_FILES["photo.png"]!.data;
    const answered = () => rest.delivered.map((d) => d.text ?? "");
    discord.userWrites({ channelId: DM_CHANNEL, author, content: "see this", attachments: [{ url: media.url("photo.png"), filename: "photo.png", contentType: "image/png", size: png.byteLength }] });
    await waitUntil(() => answered().length === 1, { what: "the answer to the Discord image", timeoutMs: 20_000 });
    expect(answered()[0]).toBe(`see this\n[image: image/png, ${png.byteLength} bytes]`);
    const key = `dc:user:${person!.id}`;
    expect((await preview(key)).find((m) => m.role === "user")).toMatchObject({ body: "see this", attachments: [{ type: "image", mimeType: "image/png", size: png.byteLength }] });

    const stored = (await preview(key)).length;
    discord.userWrites({ channelId: DM_CHANNEL, author, content: "and this", attachments: [{ url: media.url("report.pdf"), filename: "report.pdf", contentType: "application/pdf", size: 30 }] });
    await waitUntil(() => answered().length === 2, { what: "the refusal of the PDF", timeoutMs: 20_000 });
    expect(answered()[1]).toMatch(/"report\.pdf" is not one/);
    expect(await preview(key)).toHaveLength(stored);
    expect(media.fetched.filter((path) => path.endsWith("report.pdf"))).toEqual([]);
  });

  it("Signal: a picture is read from the bridge by its id and reaches the agent as an image", async () => {
    const gif = DEFAULT_MEDIA_FILES["loop.gif"]!.data;
    signal.userWrites({ from: SIGNAL_PERSON, text: "", attachments: [{ id: "sig-pic-1.gif", contentType: "image/gif", size: gif.byteLength, data: gif }] });
    await waitUntil(() => signal.delivered.some((d) => d.chat === SIGNAL_PERSON), { what: "the answer on Signal", timeoutMs: 20_000 });
    expect(signal.delivered.find((d) => d.chat === SIGNAL_PERSON)?.text).toBe(`[image: image/gif, ${gif.byteLength} bytes]`);
    expect(signal.fetchedFiles).toEqual(["sig-pic-1.gif"]);
    expect((await preview(`sig:${SIGNAL_PERSON}`)).find((m) => m.role === "user")?.attachments).toEqual([{ type: "image", mimeType: "image/gif", size: gif.byteLength }]);
  });

  it("iMessage: a picture is read from the BlueBubbles server by its guid and reaches the agent as an image", async () => {
    const png = DEFAULT_MEDIA_FILES["photo.png"]!.data;
    const guid = bluebubbles.keepFile(png, "image/png");
    const attachments = [{ guid, transferName: "IMG_0001.png", mimeType: "image/png", totalBytes: png.byteLength }];
    const event = blueBubblesNewMessage({ chatGuid: IMESSAGE_CHAT, from: "+15559870042", text: "from my phone", attachments });
    const posted = await postWebhook(gw, `/api/channels/imsg/webhook?password=${encodeURIComponent(bbServer!.password)}`, { headers: { "content-type": "application/json" }, body: JSON.stringify(event) });
    expect(posted.status).toBe(200);
    await waitUntil(() => bluebubbles.delivered.some((d) => d.chat === IMESSAGE_CHAT), { what: "the answer on iMessage", timeoutMs: 20_000 });
    expect(bluebubbles.delivered.find((d) => d.chat === IMESSAGE_CHAT)?.text).toBe(`from my phone\n[image: image/png, ${png.byteLength} bytes]`);
    expect(bluebubbles.fileDownloads).toEqual([guid]);
  });

  it("WhatsApp: an image's media id is looked up and its URL read with the token; it reaches the agent as an image", async () => {
    const png = DEFAULT_MEDIA_FILES["photo.png"]!.data;
    const mediaId = whatsapp.keepMedia(png, "image/png");
    const note = whatsappMessageNotification({
      phoneNumberId: waNumber!.phoneNumberId,
      from: WA_PERSON,
      text: "a caption",
      media: { type: "image", object: { id: mediaId, mime_type: "image/png", sha256: "fake" } },
    });
    expect((await postWebhook(gw, "/api/channels/wa/webhook", signedWhatsAppRequest(note, WA_SECRET))).status).toBe(200);
    await waitUntil(() => whatsapp.delivered.some((d) => d.chat === WA_PERSON), { what: "the answer on WhatsApp", timeoutMs: 20_000 });
    expect(whatsapp.delivered.find((d) => d.chat === WA_PERSON)?.text).toBe(`a caption\n[image: image/png, ${png.byteLength} bytes]`);
    expect(whatsapp.mediaDownloads).toEqual([mediaId]);
  });

  it("Slack: a shared image is read from url_private with the bot token and reaches the agent as an image", async () => {
    const gif = DEFAULT_MEDIA_FILES["loop.gif"]!.data;
    const file = slack.keepFile(gif, "image/gif", "loop.gif");
    const event = slackMessageEvent({ channel: SLACK_DM, user: "U0FAKEUSER", text: "this one", botUserId: slackBot!.userId, files: [file] });
    expect((await postWebhook(gw, "/api/chatapp/events", signedSlackRequest(event, SLACK_SECRET))).status).toBe(200);
    await waitUntil(() => slack.delivered.some((d) => d.chat === SLACK_DM), { what: "the answer on Slack", timeoutMs: 20_000 });
    expect(slack.delivered.find((d) => d.chat === SLACK_DM)?.text).toBe(`this one\n[image: image/gif, ${gif.byteLength} bytes]`);
    expect(slack.fileDownloads).toEqual([file.id]);
  });
});
