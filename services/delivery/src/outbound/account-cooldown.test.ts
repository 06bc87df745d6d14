import { parseConfig } from "@gw/config";
import type { DeliverySendRequest } from "@gw/contracts";
import { createMemoryFastStore, RunOnce } from "@gw/store";
import { z } from "zod";
import {
  DEFAULT_DISCORD_BOTS,
  DEFAULT_WHATSAPP_NUMBERS,
  type FakeDiscord,
  type FakeRequest,
  type FakeWhatsApp,
  startFakeDiscord,
  startFakeWhatsApp,
  waitFor,
} from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ChannelDirectory } from "../channel-directory.js";
import { CHANNEL_PLUGINS } from "../channels/index.js";
import { Dispatcher } from "./dispatcher.js";
import { HttpClients } from "../http-clients.js";
import { Pacer } from "./pacer.js";
import { StatusBook } from "../status-book.js";

const [bot] = DEFAULT_DISCORD_BOTS;
const [number] = DEFAULT_WHATSAPP_NUMBERS;
const CHANNEL_A = "1300000000000000001";
const CHANNEL_B = "1300000000000000002";
/** Timers and clocks of one process: a wait may end a little early as Date.now() rounds. */
const EARLY_MS = 25;
/** However slow the machine, a held send goes out well within this after its cooldown. */
const LATE_MS = 5_000;

let discord: FakeDiscord;
let whatsapp: FakeWhatsApp;
const clients = new HttpClients([bot!.token, number!.accessToken]);
let keys = 0;

/** Delivery's send path (pacing, cooldowns, retries) over the real plugins and the fakes. */
function setup() {
  const config = parseConfig(
    `{ channels: {
      dc: { kind: "discord", botToken: "${bot!.token}", apiBaseUrl: "${discord.baseUrl}" },
      wa: { kind: "whatsapp", accessToken: "${number!.accessToken}", phoneNumberId: "${number!.phoneNumberId}", apiBaseUrl: "${whatsapp.baseUrl}" },
    } }`,
    { env: {} },
  );
  const store = createMemoryFastStore();
  const status = new StatusBook(store);
  const dispatcher = new Dispatcher({
    directory: ChannelDirectory.build(config.channels, CHANNEL_PLUGINS, clients.factory),
    store,
    idempotency: new RunOnce<string[]>(store, { windowMs: 60_000, claimTtlMs: 10_000, pollMs: 5, schema: z.array(z.string()) }),
    pacer: new Pacer(store),
    status,
    maxAttempts: 3,
    callTimeoutMs: 5_000,
    sendTimeoutMs: 15_000,
    windowMs: 60_000,
    media: { allowHosts: [], allowPrivateNetworks: false },
    backoff: { baseMs: 10, capMs: 20 },
    pacing: "platform",
  });
  const send = (channel: string, to: string) =>
    dispatcher.send({ channel, to, text: "hello", mediaUrls: [], gifPlayback: false, accountId: "", threadId: "", sessionKey: "", idempotencyKey: `k-${++keys}` } satisfies DeliverySendRequest);
  /** Resolves once delivery has taken in the account's 429 (its cooldown is set by then). */
  const limited = (channel: string) =>
    waitFor(async () => ((await status.read(channel, "default")).rateLimitedUntil > 0 ? true : undefined), { intervalMs: 5, what: "the 429 to be taken in" });
  return { send, limited };
}

/** Where the first request other than the refused one that `matches` came, and how long after the refusal. */
function after(requests: readonly FakeRequest[], refused: FakeRequest, matches: (r: FakeRequest) => boolean): { index: number; gapMs: number } {
  const index = requests.findIndex((r) => r !== refused && matches(r));
  expect(index).toBeGreaterThan(0);
  return { index, gapMs: requests[index]!.receivedAt - refused.receivedAt };
}

beforeAll(async () => {
  discord = await startFakeDiscord({ channels: [{ id: CHANNEL_A, type: 0 }, { id: CHANNEL_B, type: 0 }] });
  whatsapp = await startFakeWhatsApp();
});
afterAll(async () => {
  await clients.close();
  await discord.close();
  await whatsapp.close();
});
beforeEach(() => {
  discord.reset();
  whatsapp.reset();
});

const toChannel = (id: string) => (r: FakeRequest) => r.path.endsWith(`/channels/${id}/messages`);
const toNumber = (digits: string) => (r: FakeRequest) => (r.body as { to?: unknown } | undefined)?.to === digits;

describe("an account-wide rate limit", () => {
  it("holds a Discord bot's send to another channel for a global 429's retry_after", async () => {
    const { send, limited } = setup();
    discord.next({ kind: "rate_limit", retryAfterSeconds: 0.6, global: true });
    const first = send("dc", `channel:${CHANNEL_A}`);
    await limited("dc");
    await Promise.all([first, send("dc", `channel:${CHANNEL_B}`)]);
    const [refused] = discord.requests;
    const other = after(discord.requests, refused!, toChannel(CHANNEL_B));
    expect(other.gapMs).toBeGreaterThanOrEqual(600 - EARLY_MS);
    expect(other.gapMs).toBeLessThan(600 + LATE_MS);
    expect(discord.delivered.map((d) => d.chat).sort()).toEqual([CHANNEL_A, CHANNEL_B]);
  });

  it("but a route's 429 holds only that channel: the other goes before its retry", async () => {
    const { send, limited } = setup();
    discord.next({ kind: "rate_limit", retryAfterSeconds: 0.6 });
    const first = send("dc", `channel:${CHANNEL_A}`);
    await limited("dc");
    await Promise.all([first, send("dc", `channel:${CHANNEL_B}`)]);
    const [refused] = discord.requests;
    expect(after(discord.requests, refused!, toChannel(CHANNEL_B)).index).toBeLessThan(after(discord.requests, refused!, toChannel(CHANNEL_A)).index);
  });

  it("holds a WhatsApp number's send to another person after a throughput limit (130429)", async () => {
    const { send, limited } = setup();
    whatsapp.next({ kind: "rate_limit", retryAfterSeconds: 0 });
    const first = send("wa", "+15557654321");
    await limited("wa");
    await Promise.all([first, send("wa", "+15557654322")]);
    const [refused] = whatsapp.requests;
    expect(refused!.body).toMatchObject({ to: "15557654321" });
    // Graph names no wait; delivery waits at least a second then.
    const other = after(whatsapp.requests, refused!, toNumber("15557654322"));
    expect(other.gapMs).toBeGreaterThanOrEqual(1_000 - EARLY_MS);
    expect(other.gapMs).toBeLessThan(1_000 + LATE_MS);
    expect(whatsapp.delivered.map((d) => d.chat).sort()).toEqual(["15557654321", "15557654322"]);
  });

  it("but a pair rate limit (131056) holds only that person", async () => {
    const { send, limited } = setup();
    const pair = { error: { message: "(#131056) (Business Account, Consumer Account) pair rate limit hit", type: "OAuthException", code: 131056, fbtrace_id: "AfAkE" } };
    whatsapp.next({ kind: "raw", status: 400, headers: { "content-type": "application/json" }, body: JSON.stringify(pair) });
    const first = send("wa", "+15557654321");
    await limited("wa");
    await Promise.all([first, send("wa", "+15557654322")]);
    const [refused] = whatsapp.requests;
    expect(after(whatsapp.requests, refused!, toNumber("15557654322")).index).toBeLessThan(after(whatsapp.requests, refused!, toNumber("15557654321")).index);
  });
});
