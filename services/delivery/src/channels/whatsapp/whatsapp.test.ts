import { type ChannelAdapter, ChannelError, type OutboundMessage, statusOf } from "@gw/channels";
import { DEFAULT_WHATSAPP_NUMBERS, type FakeWhatsApp, startFakeWhatsApp } from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "@gw/config";
import { ChannelDirectory } from "../../channel-directory.js";
import { HttpClients } from "../../http-clients.js";
import { CHANNEL_PLUGINS } from "../index.js";
import { graphErrorMessage } from "./api.js";
import { whatsappMedium } from "./media.js";
import { whatsappPlugin } from "./plugin.js";
import { normaliseWhatsAppRecipient } from "./recipient.js";
import { WhatsAppSettingsSchema } from "./settings.js";

const [number] = DEFAULT_WHATSAPP_NUMBERS;
const TO = "+15557654321";
const MEDIA = "https://media.example.org/files";
const signal = () => AbortSignal.timeout(10_000);

let fake: FakeWhatsApp;
const clients = new HttpClients([number!.accessToken]);

function adapter(settings: { accessToken?: string; phoneNumberId?: string } = {}): ChannelAdapter {
  const parsed = WhatsAppSettingsSchema.parse({
    accessToken: settings.accessToken ?? number!.accessToken,
    phoneNumberId: settings.phoneNumberId ?? number!.phoneNumberId,
    apiBaseUrl: fake.baseUrl,
  });
  return whatsappPlugin.create({ channelId: "whatsapp", accountId: "default", settings: parsed, http: clients.factory });
}

function message(extra: Partial<OutboundMessage> = {}): OutboundMessage {
  return { to: TO, text: "hello", mediaUrls: [], gifPlayback: false, idempotencyKey: "k", ...extra };
}

async function failure(call: Promise<unknown>): Promise<ChannelError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChannelError);
  return err as ChannelError;
}

const graphError = (status: number, error: Record<string, unknown>) => ({
  kind: "raw" as const,
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ error: { type: "OAuthException", fbtrace_id: "AbCdEf", ...error } }),
});

const bodies = () => fake.requests.map((r) => r.body as Record<string, unknown>);

beforeAll(async () => {
  fake = await startFakeWhatsApp();
});
afterAll(async () => {
  await clients.close();
  await fake.close();
});
beforeEach(() => fake.reset());

describe("whatsapp recipients", () => {
  it("takes E.164 with separators or WhatsApp's bare digits, and normalises to E.164", () => {
    expect(normaliseWhatsAppRecipient(" +1 (555) 765-4321 ")).toBe(TO);
    expect(normaliseWhatsAppRecipient("15557654321")).toBe(TO);
    expect(normaliseWhatsAppRecipient("+49.30.1234567")).toBe("+49301234567");
    for (const bad of ["+", "555", "+01234567", "whatsapp:+15557654321", "+1555765432x"]) {
      expect(() => normaliseWhatsAppRecipient(bad), bad).toThrow(ChannelError);
    }
  });

  it("sends to the digits without '+'", async () => {
    await adapter().send(message({ to: adapter().validateRecipient("+1 555 765 4321") }), signal());
    expect(bodies()[0]).toMatchObject({ to: "15557654321" });
  });
});

describe("whatsapp messages", () => {
  it("asks for a link preview only when the text holds a URL", async () => {
    await adapter().send(message({ text: "see https://example.org/x" }), signal());
    await adapter().send(message({ text: "no link here" }), signal());
    expect(bodies().map((b) => (b.text as { preview_url: boolean }).preview_url)).toEqual([true, false]);
  });

  it("makes a threadId a reply quoting that message", async () => {
    const first = await adapter().send(message(), signal());
    await adapter().send(message({ threadId: first.messageId }), signal());
    expect(bodies()[1]).toMatchObject({ context: { message_id: first.messageId } });
    expect(fake.delivered[1]!.threadId).toBe(first.messageId);
  });

  it("shows typing by marking the message being answered read, and nothing without its id", async () => {
    await adapter().typing!.show(TO, undefined, signal(), "wamid.INBOUND1");
    await adapter().typing!.show(TO, undefined, signal());
    expect(bodies()).toEqual([{ messaging_product: "whatsapp", status: "read", message_id: "wamid.INBOUND1", typing_indicator: { type: "text" } }]);
    expect(fake.reads.at(-1)).toEqual({ account: number!.phoneNumberId, messageId: "wamid.INBOUND1", typing: true });
    expect(fake.delivered).toEqual([]);
  });

  it("types media by extension: images and documents carry the caption, a document its filename", async () => {
    await adapter().send(message({ text: "photo", mediaUrls: [`${MEDIA}/a.JPG`] }), signal());
    await adapter().send(message({ text: "report", mediaUrls: [`${MEDIA}/Q3%20report.pdf`] }), signal());
    expect(bodies()[0]).toMatchObject({ type: "image", image: { link: `${MEDIA}/a.JPG`, caption: "photo" } });
    expect(bodies()[1]).toMatchObject({ type: "document", document: { caption: "report", filename: "Q3 report.pdf" } });
    expect(fake.delivered.map((d) => d.text)).toEqual(["photo", "report"]);
  });

  it("sends the text first when the medium takes no caption or the text is too long for one", async () => {
    const audio = await adapter().send(message({ text: "listen", mediaUrls: [`${MEDIA}/note.mp3`] }), signal());
    expect(bodies().map((b) => b.type)).toEqual(["text", "audio"]);
    expect(bodies()[1]!.audio).toEqual({ link: `${MEDIA}/note.mp3` });
    expect(audio.messageIds).toEqual(fake.delivered.map((d) => d.id));
    fake.reset();
    const long = "x".repeat(1025);
    await adapter().send(message({ text: long, mediaUrls: [`${MEDIA}/a.png`] }), signal());
    expect(bodies().map((b) => b.type)).toEqual(["text", "image"]);
    expect(fake.delivered.map((d) => d.text)).toEqual([long, undefined]);
  });

  it("sends GIFs, WebP and unknown types as documents", () => {
    expect(whatsappMedium(`${MEDIA}/loop.gif`)).toEqual({ type: "document", filename: "loop.gif" });
    expect(whatsappMedium(`${MEDIA}/sticker.webp`).type).toBe("document");
    expect(whatsappMedium(`${MEDIA}/download?id=7`)).toEqual({ type: "document", filename: "download" });
    expect(whatsappMedium("https://media.example.org/")).toEqual({ type: "document" });
    expect(whatsappMedium(`${MEDIA}/clip.mp4`)).toEqual({ type: "video" });
  });

  it("refuses more than one medium per message without a call", async () => {
    const err = await failure(adapter().send(message({ mediaUrls: [`${MEDIA}/a.png`, `${MEDIA}/b.png`] }), signal()));
    expect(err.kind).toBe("unsupported");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("whatsapp errors", () => {
  it("reads throttling from Graph's code, whatever the HTTP status", async () => {
    for (const code of [4, 80007, 130429, 131048, 131056]) {
      fake.next(graphError(400, { message: `(#${code}) Rate limit`, code }));
      const err = await failure(adapter().send(message(), signal()));
      expect(err, String(code)).toMatchObject({ kind: "rate_limited", platformCode: String(code), retryAfterMs: undefined });
      // App, business account and number limits hold every recipient; spam and pair limits one.
      expect(err.rateLimitScope, String(code)).toBe(code === 131048 || code === 131056 ? undefined : "account");
    }
  });

  it("treats Meta's transient codes as unavailable and the rest as refusals with the reason", async () => {
    fake.next(graphError(400, { message: "(#131000) Something went wrong", code: 131000 }));
    expect(await failure(adapter().send(message(), signal()))).toMatchObject({ kind: "unavailable", platformCode: "131000" });
    fake.next(
      graphError(400, {
        message: "(#131047) Re-engagement message",
        code: 131047,
        error_data: { messaging_product: "whatsapp", details: "More than 24 hours have passed since the recipient last replied to the sender number." },
      }),
    );
    const window = await failure(adapter().send(message(), signal()));
    expect(window).toMatchObject({ kind: "rejected", platformCode: "131047", status: 400 });
    expect(window.message).toBe(
      "whatsapp answered HTTP 400: (#131047) Re-engagement message: More than 24 hours have passed since the recipient last replied to the sender number.",
    );
  });

  it("does not repeat details that the message already says", () => {
    expect(graphErrorMessage({ error: { message: "(#131026) Message undeliverable", code: 131026, error_data: { details: "Message Undeliverable." } } })).toBe(
      "(#131026) Message undeliverable",
    );
    expect(graphErrorMessage({ error: { code: 1 } })).toBeUndefined();
    expect(graphErrorMessage("<html>")).toBeUndefined();
  });
});

describe("whatsapp status", () => {
  it("names the business number in E.164, and reports bad credentials or a wrong number id", async () => {
    expect(await statusOf(adapter(), signal())).toEqual({ reachable: true, identity: "+15550001111" });
    expect(fake.requests[0]!.query).toEqual({ fields: "display_phone_number,verified_name" });
    const token = await statusOf(adapter({ accessToken: "EAAwrong" }), signal());
    expect(token).toMatchObject({ reachable: false });
    expect(token.error).toContain("Invalid OAuth access token");
    const id = await statusOf(adapter({ phoneNumberId: "999" }), signal());
    expect(id.reachable).toBe(false);
    expect(id.error).toContain("Object with ID '999' does not exist");
  });
});

describe("whatsapp plugin registration", () => {
  it("is listed in CHANNEL_PLUGINS and builds an account from the config file", () => {
    const config = parseConfig(`{ channels: { default: "wa", wa: { kind: "whatsapp", accessToken: "t0k", phoneNumberId: "1055", apiBaseUrl: "${fake.baseUrl}" } } }`, { env: {} });
    const [entry] = ChannelDirectory.build(config.channels, CHANNEL_PLUGINS, clients.factory).list();
    expect(entry!.kind).toBe("whatsapp");
    expect(entry!.accounts[0]!.adapter.limits).toEqual({ textChunk: 4096, mediaPerMessage: 1 });
  });
});
