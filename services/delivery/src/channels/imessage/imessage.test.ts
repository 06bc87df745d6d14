import { type ChannelAdapter, ChannelError, type OutboundMessage, statusOf } from "@gw/channels";
import { createHttpClient, type HttpClient } from "@gw/http-client";
import {
  DEFAULT_MEDIA_FILES,
  type FakeBlueBubbles,
  type FakeMediaServer,
  isFakeFile,
  startFakeBlueBubbles,
  startFakeMediaServer,
} from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_MEDIA_LIMITS } from "../registry.js";
import { imessagePlugin, tempGuidFor } from "./plugin.js";
import { IMessageSettingsSchema } from "./settings.js";

const SERVERS = [
  { password: "pw-with-helper", name: "mac-one" },
  { password: "pw-without-helper", name: "mac-two", privateApi: false },
];
const CHAT = "iMessage;-;+15557654321";

let fake: FakeBlueBubbles;
let media: FakeMediaServer;
const clients: HttpClient[] = [];

function adapter(opts: { password?: string; privateApi?: boolean; bridgeUrl?: string } = {}): ChannelAdapter {
  return imessagePlugin.create({
    channelId: "imessage",
    accountId: "default",
    settings: {
      bridgeUrl: opts.bridgeUrl ?? fake.baseUrl,
      password: opts.password ?? SERVERS[0]!.password,
      privateApi: opts.privateApi ?? false,
      dmPolicy: "pairing",
      allowFrom: [],
    },
    http: (http) => {
      const client = createHttpClient({ ...http, ssrf: { allowHosts: ["127.0.0.1"] } });
      clients.push(client);
      return client;
    },
    media: DEFAULT_MEDIA_LIMITS,
  });
}

let keys = 0;
/** The fake remembers every tempGuid it sent, so each message gets a fresh part key unless a test names one. */
const message = (over: Partial<OutboundMessage> = {}): OutboundMessage => ({
  to: "+15557654321",
  text: "hello",
  mediaUrls: [],
  gifPlayback: false,
  idempotencyKey: `part-${++keys}`,
  ...over,
});

const signal = () => AbortSignal.timeout(5_000);
const bodies = () => fake.requests.map((r) => r.body as Record<string, unknown>);

async function failure(call: Promise<unknown>): Promise<ChannelError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChannelError);
  return err as ChannelError;
}

const jsonReply = (status: number, body: unknown) =>
  fake.next({ kind: "raw", status, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

beforeAll(async () => {
  fake = await startFakeBlueBubbles({ servers: SERVERS });
  media = await startFakeMediaServer();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await fake.close();
  await media.close();
});
beforeEach(() => fake.reset());

describe("imessage recipients", () => {
  it("makes phone numbers and Apple IDs direct chats and keeps chat GUIDs", () => {
    const a = adapter();
    expect(a.validateRecipient("+1 (555) 765-4321")).toBe(CHAT);
    expect(a.validateRecipient(" Someone@iCloud.com ")).toBe("iMessage;-;someone@icloud.com");
    for (const guid of ["iMessage;+;chat123456789", "SMS;-;+15557654321", "any;-;+15557654321"]) expect(a.validateRecipient(guid)).toBe(guid);
  });
});

describe("imessage sends", () => {
  it("puts the password on every call as ?password=", async () => {
    const a = adapter();
    await a.send(message({ mediaUrls: [media.url("photo.png")] }), signal());
    await statusOf(a, signal());
    expect(fake.requests.map((r) => [r.path, r.query.password])).toEqual([
      ["/api/v1/message/text", SERVERS[0]!.password],
      ["/api/v1/message/attachment", SERVERS[0]!.password],
      ["/api/v1/server/info", SERVERS[0]!.password],
    ]);
  });

  it("sends text, then each medium as its own message, in order, with its own tempGuid", async () => {
    const receipt = await adapter().send(message({ idempotencyKey: "part-key", mediaUrls: [media.url("photo.png"), media.url("report.pdf")] }), signal());
    expect(receipt.messageIds).toEqual(fake.delivered.map((d) => d.id));
    expect(fake.delivered.map((d) => [d.text, d.media[0]?.filename])).toEqual([
      ["hello", undefined],
      [undefined, "photo.png"],
      [undefined, "report.pdf"],
    ]);
    const [text, photo, pdf] = bodies();
    expect(text).toEqual({ chatGuid: CHAT, method: "apple-script", tempGuid: tempGuidFor("part-key", 0), message: "hello" });
    expect(photo).toMatchObject({ chatGuid: CHAT, method: "apple-script", tempGuid: tempGuidFor("part-key", 1), name: "photo.png" });
    expect(pdf).toMatchObject({ tempGuid: tempGuidFor("part-key", 2), name: "report.pdf" });
    const file = photo!.attachment;
    expect(isFakeFile(file) && [file.contentType, Buffer.from(file.data).equals(Buffer.from(DEFAULT_MEDIA_FILES["photo.png"]!.data))]).toEqual([
      "image/png",
      true,
    ]);
  });

  it("replies through the Private API with selectedMessageGuid, and uses it for everything when privateApi is set", async () => {
    await adapter().send(message({ threadId: " ABC-123 " }), signal());
    expect(bodies()[0]).toMatchObject({ method: "private-api", selectedMessageGuid: "ABC-123" });
    await adapter({ privateApi: true }).send(message(), signal());
    expect(bodies()[1]).toMatchObject({ method: "private-api" });
    expect(bodies()[1]).not.toHaveProperty("selectedMessageGuid");
  });

  it("refuses a reply as final when the server's Private API helper is not connected", async () => {
    const err = await failure(adapter({ password: SERVERS[1]!.password }).send(message({ threadId: "ABC-123" }), signal()));
    expect([err.kind, err.platformCode, err.status]).toEqual(["rejected", "iMessage Error", 500]);
    expect(err.message).toBe("bluebubbles answered HTTP 500: iMessage Error: iMessage Private API Helper is not connected!");
  });

  it("calls a send Messages refused final, with Messages' error code", async () => {
    const a = adapter();
    jsonReply(500, {
      status: 500,
      message: "Message Send Error",
      error: { type: "iMessage Error", message: "Failed to send message! See attached message error code." },
      data: { guid: "X", error: 22 },
    });
    const refused = await failure(a.send(message(), signal()));
    expect([refused.kind, refused.message]).toEqual(["rejected", expect.stringMatching(/See attached message error code\. \(Messages error 22\)$/)]);
    jsonReply(200, { status: 200, message: "Attachment sent!", data: { guid: "Y", error: 4 } });
    expect((await failure(a.send(message({ text: undefined, mediaUrls: [media.url("photo.png")] }), signal()))).message).toMatch(/Messages error 4/);
  });

  it("retries later, not never, while an earlier try of the same part is still being sent", async () => {
    const slow = await startFakeBlueBubbles({ servers: SERVERS, sendDelayMs: 300 });
    try {
      const a = adapter({ bridgeUrl: slow.baseUrl });
      const once = message();
      const [first, second] = await Promise.allSettled([a.send(once, signal()), a.send(once, signal())]);
      expect(first.status).toBe("fulfilled");
      expect(second.status === "rejected" && (second.reason as ChannelError).kind).toBe("unavailable");
      expect(slow.delivered).toHaveLength(1);
      // Once the first try is done, this fake answers the retry with its message; a real
      // BlueBubbles server forgets finished tempGuids and would send it again.
      expect(await a.send(once, signal())).toEqual(first.status === "fulfilled" && first.value);
    } finally {
      await slow.close();
    }
  });

  it("downloads every medium before sending anything", async () => {
    const err = await failure(adapter().send(message({ mediaUrls: [media.url("photo.png"), media.url("missing.gif")] }), signal()));
    expect(err.message).toMatch(/^medium 2 could not be downloaded/);
    expect(fake.requests).toHaveLength(0);
  });

  it("refuses a threadId that is no GUID without a call", async () => {
    expect((await failure(adapter().send(message({ threadId: "two words" }), signal()))).platformCode).toBe("invalid_thread");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("imessage status", () => {
  it("names the Apple ID the server detected", async () => {
    expect(await statusOf(adapter(), signal())).toEqual({ reachable: true, identity: "mac-one@icloud.com" });
  });

  it("is not reachable with a wrong password, or without the helper privateApi needs", async () => {
    const wrong = await statusOf(adapter({ password: "wrong-password" }), signal());
    expect(wrong).toEqual({ reachable: false, error: "bluebubbles answered HTTP 401: Authentication Error: Unauthorized" });
    const helperless = await statusOf(adapter({ password: SERVERS[1]!.password, privateApi: true }), signal());
    expect(helperless).toMatchObject({ reachable: false, identity: "mac-two@icloud.com", error: expect.stringMatching(/Private API is off/) });
  });
});

describe("imessage settings", () => {
  it("sends through AppleScript unless privateApi is set, and takes only a boolean there", () => {
    const base = { bridgeUrl: "http://127.0.0.1:1234", password: "p" };
    expect(IMessageSettingsSchema.parse(base).privateApi).toBe(false);
    expect(IMessageSettingsSchema.parse({ ...base, privateApi: true }).privateApi).toBe(true);
    expect(IMessageSettingsSchema.safeParse({ ...base, privateApi: "yes" }).success).toBe(false);
  });
});
