import { DEFAULT_TELEGRAM_BOTS, type FakeModelServer, type FakeTelegram, startFakeModelServer, startFakeTelegram } from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { collectRun, RUN_AGENTS, runModels, send } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { WsClient } from "./fixtures/ws-client.js";

const [BOT_ONE, BOT_TWO] = DEFAULT_TELEGRAM_BOTS as [(typeof DEFAULT_TELEGRAM_BOTS)[0], (typeof DEFAULT_TELEGRAM_BOTS)[0]];
const CHAT = "4242";
const GROUP = "-1001234567890";

let keys = 0;
const key = (what: string) => `e2e-${what}-${Date.now()}-${keys++}`;

/** Telegram channels on the fake: `tg` (default) and `ops` with two accounts. */
function channels(fake: FakeTelegram) {
  return {
    default: "tg",
    tg: { kind: "telegram", botToken: BOT_ONE.token, apiBaseUrl: fake.baseUrl },
    ops: {
      kind: "telegram",
      apiBaseUrl: fake.baseUrl,
      accounts: { alerts: { botToken: BOT_ONE.token }, support: { botToken: BOT_TWO.token } },
    },
  };
}

describe.each(MODES)("delivery through the gateway (%s)", (mode) => {
  let fake: FakeTelegram;
  let model: FakeModelServer;
  let gw: GatewayUnderTest;
  let client: WsClient;

  beforeAll(async () => {
    fake = await startFakeTelegram();
    model = await startFakeModelServer();
    gw = await startGateway(mode, {
      agents: [...RUN_AGENTS, { id: "notifier", name: "Notifier", model: "fake-openai/gpt-test", tools: ["message.send"] }],
      models: runModels(model),
      extraConfig: { channels: channels(fake), delivery: { sendTimeoutMs: 20_000, maxAttempts: 3 } },
    });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  });
  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await fake?.close();
    await model?.close();
  });
  beforeEach(() => fake.reset());

  it("sends text over WS and answers a repeated idempotencyKey from the first result", async () => {
    const idempotencyKey = key("ws");
    const first = await client.request("send", { to: CHAT, message: "hello from the gateway", idempotencyKey });
    expect(first).toMatchObject({ ok: true, payload: { sent: true, channel: "tg", accountId: "default" } });
    expect(first.payload?.messageId).toBe(fake.delivered[0]!.id);
    expect(first.meta).toBeUndefined();
    const again = await client.request("send", { to: CHAT, message: "hello from the gateway", idempotencyKey });
    expect(again).toMatchObject({ ok: true, payload: { messageId: first.payload?.messageId, cached: true }, meta: { cached: true } });
    expect(fake.delivered.map((d) => d.text)).toEqual(["hello from the gateway"]);
    const reused = await client.request("send", { to: CHAT, message: "another text", idempotencyKey });
    expect(reused.error?.code).toBe("CONFLICT");
  });

  it("serves POST /api/send in the request-frame shape, with a bearer credential", async () => {
    const body = { jsonrpc: "2.0", id: 7, method: "send", params: { to: CHAT, message: "over http", idempotencyKey: key("http") } };
    const res = await httpRequest(`${gw.httpUrl()}/api/send`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      localAddress: "127.0.0.60",
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ id: 7, ok: true, payload: { sent: true, messageId: fake.delivered[0]!.id } });
    const refused = await httpRequest(`${gw.httpUrl()}/api/send`, {
      method: "POST",
      headers: { authorization: "Bearer wrong", "content-type": "application/json" },
      body: JSON.stringify(body),
      localAddress: "127.0.0.61",
    });
    expect(refused.status).toBe(401);
    const invalid = await httpRequest(`${gw.httpUrl()}/api/send`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ params: { message: "no recipient", idempotencyKey: key("http") } }),
    });
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.body)).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringMatching(/body\.params\.to/) } });
  });

  it("refuses bad requests with the SPEC codes before any platform call", async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["send", { message: "x", idempotencyKey: key("bad") }, "INVALID_REQUEST"],
      ["send", { to: CHAT, idempotencyKey: key("bad") }, "INVALID_REQUEST"],
      ["send", { to: CHAT, message: "x" }, "INVALID_REQUEST"],
      ["send", { to: CHAT, message: "x", mediaUrl: "ftp://x.example/a.png", idempotencyKey: key("bad") }, "INVALID_REQUEST"],
      ["send", { to: CHAT, message: "x", mediaUrl: "http://169.254.169.254/latest", idempotencyKey: key("bad") }, "INVALID_REQUEST"],
      ["send", { to: "not a chat!", message: "x", idempotencyKey: key("bad") }, "INVALID_REQUEST"],
      ["send", { to: CHAT, message: "x", channel: "nope", idempotencyKey: key("bad") }, "CHANNEL_NOT_FOUND"],
      ["send", { to: CHAT, message: "x", channel: "ops", accountId: "nope", idempotencyKey: key("bad") }, "CHANNEL_NOT_FOUND"],
      ["poll", { to: CHAT, question: "Q?", options: ["only one"], idempotencyKey: key("bad") }, "INVALID_REQUEST"],
    ];
    for (const [method, params, code] of cases) {
      expect((await client.request(method, params)).error?.code, JSON.stringify(params)).toBe(code);
    }
    expect(fake.requests).toEqual([]);
  });

  it("answers a well-formed channel id that is not configured with CHANNEL_NOT_FOUND, whatever its case", async () => {
    const poll = { to: CHAT, question: "Q?", options: ["a", "b"] };
    for (const [method, params] of [
      ["send", { to: CHAT, message: "x", channel: "Telegram" }],
      ["send", { to: CHAT, message: "x", channel: "TG" }],
      ["poll", { ...poll, channel: "Telegram" }],
    ] as const) {
      const res = await client.request(method, { ...params, idempotencyKey: key("case") });
      expect(res.error, JSON.stringify(params)).toMatchObject({ code: "CHANNEL_NOT_FOUND", message: expect.stringContaining(`"${params.channel}" is not configured`) });
    }
    // Only what cannot be a channel id at all is malformed.
    const malformed = await client.request("send", { to: CHAT, message: "x", channel: "tele gram", idempotencyKey: key("case") });
    expect(malformed.error).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/^params\.channel: /) });
    expect(fake.requests).toEqual([]);
  });

  it("reports the platform's refusal as DELIVERY_FAILED with its reason and no secret", async () => {
    const res = await client.request("send", { to: "999", message: "to nobody", idempotencyKey: key("nochat") });
    expect(res.error?.code).toBe("DELIVERY_FAILED");
    expect(res.error?.message).toMatch(/chat not found/);
    expect(JSON.stringify(res)).not.toContain(BOT_ONE.token.split(":")[1]!);
  });

  it("sends polls, threads, media and from a chosen account", async () => {
    const poll = await client.request("poll", {
      to: GROUP,
      question: "Ship it?",
      options: ["yes", "no"],
      anonymous: true,
      allowMultipleAnswers: true,
      idempotencyKey: key("poll"),
    });
    expect(poll).toMatchObject({ ok: true, payload: { sent: true } });
    expect(fake.delivered[0]!.poll).toEqual({ question: "Ship it?", options: ["yes", "no"], anonymous: true, allowMultipleAnswers: true });

    const photo = await client.request("send", {
      to: GROUP,
      threadId: "7",
      mediaUrl: "https://media.example/cat.png",
      channel: "ops",
      accountId: "support",
      idempotencyKey: key("media"),
    });
    expect(photo).toMatchObject({ ok: true, payload: { channel: "ops", accountId: "support" } });
    const delivered = fake.delivered.at(-1)!;
    expect(delivered).toMatchObject({ threadId: "7", media: [{ url: "https://media.example/cat.png" }] });
    expect(delivered.account).toBe(BOT_TWO.token.split(":")[0]);
  });

  it("splits a long text into ordered parts and names every part's id", async () => {
    const paragraph = (n: number) => `Paragraph ${n}. ${"word ".repeat(400).trim()}.`;
    const text = [1, 2, 3].map(paragraph).join("\n\n");
    const res = await client.request("send", { to: CHAT, message: text, idempotencyKey: key("long") });
    expect(res.ok).toBe(true);
    expect(fake.delivered.length).toBeGreaterThan(1);
    expect(res.payload?.messageIds).toEqual(fake.delivered.map((d) => d.id));
    expect(fake.delivered.every((d) => (d.text ?? "").length <= 4096)).toBe(true);
    expect(fake.delivered.map((d) => d.text).join(" ").replace(/\s+/g, " ")).toBe(text.replace(/\s+/g, " "));
  });

  it("honours the platform's 429 retry_after and retries a 5xx", async () => {
    fake.next({ kind: "rate_limit", retryAfterSeconds: 1 });
    fake.next({ kind: "unavailable" });
    const started = Date.now();
    const res = await client.request("send", { to: CHAT, message: "after a 429", idempotencyKey: key("429") }, );
    expect(res.ok).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(fake.requests).toHaveLength(3);
    expect(fake.delivered.map((d) => d.text)).toEqual(["after a 429"]);
  });

  it("delivers an agent's answer with deliver: true to the chat of a channel session", async () => {
    const runId = `deliver-${mode}-${Date.now()}`;
    const response = send(client, "agent", { message: "answer me on telegram", sessionKey: `tg:${CHAT}`, runId, deliver: true });
    await collectRun(client, runId);
    expect((await response).ok).toBe(true);
    const deadline = Date.now() + 10_000;
    while (fake.delivered.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(fake.delivered.map((d) => d.text)).toEqual(["answer me on telegram"]);
    expect(fake.delivered[0]!.chat).toBe(CHAT);
  });

  it("lets an agent send a message with its message.send tool, to the chat of its session", async () => {
    const runId = `tool-${mode}-${Date.now()}`;
    const response = send(client, "agent", {
      message: "tools:message__send tell them",
      // A session of its own: tg:4242 already runs on builtin/echo (the deliver test above).
      sessionKey: `ops:${CHAT}`,
      agentId: "notifier",
      runId,
    });
    const events = await collectRun(client, runId);
    expect(await response).toMatchObject({ ok: true });
    const result = events.find((e) => e.stream === "tool" && e.data.phase === "result");
    expect(result?.data.result).toMatchObject({ sent: true, channel: "ops", to: CHAT });
    expect(fake.delivered.map((d) => [d.id, d.text])).toEqual([
      [(result?.data.result as { messageId: string }).messageId, "sent by the agent's message tool"],
    ]);
  });

  it("reports channels.status per account with the probe and the last success", async () => {
    await client.request("send", { to: CHAT, message: "status check", idempotencyKey: key("status") });
    const res = await client.request("channels.status", { probe: true });
    expect(res.ok).toBe(true);
    const channelsOut = res.payload?.channels as Array<{ id: string; kind: string; accounts: Array<Record<string, unknown>> }>;
    expect(channelsOut.map((c) => c.id).sort()).toEqual(["ops", "tg"]);
    const tg = channelsOut.find((c) => c.id === "tg")!;
    expect(tg).toMatchObject({ kind: "telegram", default: true, polls: true, textChunk: 4096 });
    expect(tg.accounts[0]).toMatchObject({ accountId: "default", configured: true, reachable: true, identity: expect.stringContaining("fake_one_bot") });
    expect(tg.accounts[0]!.lastSuccessAt).toEqual(expect.any(Number));
    expect(channelsOut.find((c) => c.id === "ops")!.accounts.map((a) => a.accountId)).toEqual(["alerts", "support"]);
  });
});
