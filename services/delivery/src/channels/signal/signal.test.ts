import { randomBytes } from "node:crypto";
import { type ChannelAdapter, ChannelError, type OutboundMessage, statusOf } from "@gw/channels";
import { createHttpClient, type HttpClient, type SsrfPolicy } from "@gw/http-client";
import { DEFAULT_MEDIA_FILES, type FakeMediaServer, type FakeSignal, startFakeMediaServer, startFakeSignal } from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_MEDIA_LIMITS, type MediaLimits } from "../registry.js";
import { signalPlugin } from "./plugin.js";

const NUMBER = "+15550001111";
const PERSON = "+15557654321";
/** A group id as signal-cli-rest-api writes it: base64 of signal-cli's base64 of 32 bytes. */
const GROUP = `group.${Buffer.from(randomBytes(32).toString("base64")).toString("base64")}`;
const LOOPBACK: SsrfPolicy = { allowHosts: ["127.0.0.1"] };

let fake: FakeSignal;
let media: FakeMediaServer;
const clients: HttpClient[] = [];

function adapter(opts: { number?: string; bridgeUrl?: string; media?: MediaLimits; ssrf?: SsrfPolicy } = {}): ChannelAdapter {
  return signalPlugin.create({
    channelId: "signal",
    accountId: "default",
    settings: { bridgeUrl: opts.bridgeUrl ?? fake.baseUrl, number: opts.number ?? NUMBER, dmPolicy: "pairing", allowFrom: [], inbound: "off" },
    http: (http) => {
      const client = createHttpClient({ ...http, ssrf: opts.ssrf ?? LOOPBACK });
      clients.push(client);
      return client;
    },
    media: opts.media ?? DEFAULT_MEDIA_LIMITS,
  });
}

const message = (over: Partial<OutboundMessage> = {}): OutboundMessage => ({
  to: PERSON,
  text: "hello",
  mediaUrls: [],
  gifPlayback: false,
  idempotencyKey: "k1",
  ...over,
});

const signal = () => AbortSignal.timeout(5_000);
const lastBody = () => fake.requests.at(-1)?.body as Record<string, unknown>;

async function failure(call: Promise<unknown>): Promise<ChannelError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChannelError);
  return err as ChannelError;
}

beforeAll(async () => {
  fake = await startFakeSignal();
  media = await startFakeMediaServer({
    ...DEFAULT_MEDIA_FILES,
    "noext": { contentType: "image/gif", data: DEFAULT_MEDIA_FILES["loop.gif"]!.data },
    "big.bin": { contentType: "application/octet-stream", data: new Uint8Array(64) },
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await fake.close();
  await media.close();
});
beforeEach(() => fake.reset());

describe("signal recipients", () => {
  it("normalises phone numbers and account UUIDs, and keeps the bridge's group ids", () => {
    const a = adapter();
    expect(a.validateRecipient(" +1 (555) 765-4321 ")).toBe(PERSON);
    expect(a.validateRecipient("3F2504E0-4F89-11D3-9A0C-0305E82C3301")).toBe("3f2504e0-4f89-11d3-9a0c-0305e82c3301");
    expect(a.validateRecipient(GROUP)).toBe(GROUP);
  });

  it("refuses a group id that does not decode to a 32-byte group", () => {
    const short = `group.${Buffer.from(randomBytes(16).toString("base64")).toString("base64")}`;
    expect(() => adapter().validateRecipient(short)).toThrow(/not a Signal recipient/);
  });
});

describe("signal sends", () => {
  it("sends to a group as the bridge's group id", async () => {
    await adapter().send(message({ to: GROUP }), signal());
    expect(lastBody()).toMatchObject({ recipients: [GROUP], message: "hello", number: NUMBER });
    expect(fake.delivered[0]?.chat).toBe(GROUP);
  });

  it("quotes a bare timestamp as the other person's message, and names a given author", async () => {
    const a = adapter();
    await a.send(message({ threadId: "1700000000123" }), signal());
    expect(lastBody()).toMatchObject({ quote_timestamp: 1700000000123, quote_author: PERSON });
    await a.send(message({ to: GROUP, threadId: `1700000000456:${NUMBER}` }), signal());
    expect(lastBody()).toMatchObject({ quote_timestamp: 1700000000456, quote_author: NUMBER });
  });

  it("refuses, without a call, a group reply with no author and a threadId that is no message", async () => {
    const a = adapter();
    expect((await failure(a.send(message({ to: GROUP, threadId: "1700000000123" }), signal()))).message).toMatch(/needs the quoted message's author/);
    for (const threadId of ["abc", "0", "12:not-a-person"]) {
      const err = await failure(a.send(message({ threadId }), signal()));
      expect(err.kind).toBe("rejected");
      expect(err.platformCode).toBe("invalid_thread");
    }
    expect(fake.requests).toHaveLength(0);
  });

  it("sends downloaded media as data URIs with type and file name", async () => {
    await adapter().send(message({ text: undefined, mediaUrls: [media.url("photo.png"), media.url("noext")] }), signal());
    const [png, gif] = lastBody().base64_attachments as string[];
    expect(png).toBe(`data:image/png;filename=photo.png;base64,${Buffer.from(DEFAULT_MEDIA_FILES["photo.png"]!.data).toString("base64")}`);
    expect(gif).toMatch(/^data:image\/gif;filename=noext\.gif;base64,/);
    expect(lastBody().message).toBe("");
  });

  it("refuses media over delivery.media.maxBytes, missing media and media on private hosts, before calling the bridge", async () => {
    const small = adapter({ media: { maxBytes: 32, timeoutMs: 5_000 } });
    expect((await failure(small.send(message({ mediaUrls: [media.url("big.bin")] }), signal()))).message).toMatch(/larger than 32 bytes \(delivery\.media\.maxBytes\)/);
    expect((await failure(adapter().send(message({ mediaUrls: [media.url("missing.png")] }), signal()))).message).toMatch(/medium 1 could not be downloaded.*404/);
    const strict = adapter({ ssrf: { allowHosts: [] } });
    const refused = await failure(strict.send(message({ mediaUrls: [media.url("photo.png")] }), signal()));
    expect(refused.kind).toBe("rejected");
    expect(fake.requests).toHaveLength(0);
  });

  it("sends a bridge URL's credentials as basic auth, never in the URL", async () => {
    const bridgeUrl = fake.baseUrl.replace("http://", "http://gw%40home:s%3Acret@");
    await adapter({ bridgeUrl }).send(message(), signal());
    const request = fake.requests.at(-1)!;
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from("gw@home:s:cret").toString("base64")}`);
    expect(request.path).toBe("/v2/send");
  });

  it("reads older bridges' numeric timestamps", async () => {
    fake.next({ kind: "raw", status: 201, headers: { "content-type": "application/json" }, body: '{"timestamp":1700000000999}' });
    expect(await adapter().send(message(), signal())).toEqual({ messageId: "1700000000999", messageIds: ["1700000000999"] });
  });

  it("fails a direct send the bridge reports as not delivered, by signal-cli's reason", async () => {
    const a = adapter();
    const answer = (reason: string) =>
      fake.next({
        kind: "raw",
        status: 201,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ timestamp: "1700000000001", errors: { recipients: [{ number: PERSON, reason }] } }),
      });
    for (const [reason, kind] of [
      ["UNREGISTERED_FAILURE", "rejected"],
      ["IDENTITY_FAILURE", "rejected"],
      ["NETWORK_FAILURE", "unavailable"],
      ["RATE_LIMIT_FAILURE", "rate_limited"],
    ] as const) {
      answer(reason);
      const err = await failure(a.send(message(), signal()));
      expect([err.kind, err.platformCode]).toEqual([kind, reason]);
      expect(err.message).toContain(PERSON);
    }
    answer("UNREGISTERED_FAILURE");
    expect((await a.send(message({ to: GROUP }), signal())).messageId).toBe("1700000000001");
  });

  it("maps the bridge's 429 to rate_limited with no wait of its own", async () => {
    fake.next({ kind: "rate_limit", retryAfterSeconds: 3 });
    const err = await failure(adapter().send(message(), signal()));
    expect(err.kind).toBe("rate_limited");
    expect(err.retryAfterMs).toBeUndefined();
    expect(err.message).toMatch(/rate limiting/);
  });
});

describe("signal polls", () => {
  it("creates a poll for the account's number", async () => {
    const receipt = await adapter().polls!.send(
      { to: PERSON, question: "Tea?", options: ["yes", "no"], allowMultipleAnswers: false, anonymous: false, idempotencyKey: "p" },
      signal(),
    );
    const request = fake.requests.at(-1)!;
    expect(request.path).toBe("/v1/polls/%2B15550001111");
    expect(request.body).toEqual({ recipient: PERSON, question: "Tea?", answers: ["yes", "no"], allow_multiple_selections: false });
    expect(receipt.messageId).toBe(fake.delivered[0]?.id);
  });

  it("refuses a poll quoting a message, and says so when the bridge has no polls", async () => {
    const a = adapter();
    const poll = { to: PERSON, question: "Tea?", options: ["yes", "no"], allowMultipleAnswers: true, anonymous: false, idempotencyKey: "p" };
    expect((await failure(a.polls!.send({ ...poll, threadId: "1700000000123" }, signal()))).kind).toBe("unsupported");
    expect(fake.requests).toHaveLength(0);
    fake.next({ kind: "raw", status: 404, body: "404 page not found" });
    const old = await failure(a.polls!.send(poll, signal()));
    expect([old.kind, old.message]).toEqual(["unsupported", expect.stringMatching(/no polls/)]);
  });
});

describe("signal status", () => {
  it("names the number and is not reachable when the bridge does not hold it", async () => {
    expect(await statusOf(adapter(), signal())).toEqual({ reachable: true, identity: NUMBER });
    const other = await statusOf(adapter({ number: "+15550003333" }), signal());
    expect(other).toEqual({ reachable: false, identity: "+15550003333", error: "+15550003333 is not an account of this signal-cli-rest-api" });
    expect(fake.requests.map((r) => r.path)).toEqual(["/v1/about", "/v1/accounts", "/v1/about", "/v1/accounts"]);
  });

  it("is not reachable when something else answers at the bridge URL", async () => {
    fake.next({ kind: "raw", status: 200, headers: { "content-type": "application/json" }, body: '{"hello":"world"}' });
    const probe = await statusOf(adapter(), signal());
    expect(probe.reachable).toBe(false);
    expect(probe.error).toMatch(/unexpected body/);
  });
});
