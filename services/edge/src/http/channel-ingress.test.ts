import { createSubjects, InProcessBus, serveRpc } from "@gw/bus";
import { type InboundReply, type InboundRequest, RPC } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { createMemoryFastStore } from "@gw/store";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TrustedProxies } from "../auth/client-address.js";
import { FailedAuthLimiter } from "../auth/failed-auth-limiter.js";
import { channelIngressSurface } from "./channel-ingress.js";
import { sendHttpError } from "./errors.js";

const subjects = createSubjects("t");
const logger = createLogger({ service: "test", level: "silent" });

let bus: InProcessBus;
let app: FastifyInstance;
let seen: InboundRequest[];
let answer: InboundReply;

beforeEach(async () => {
  bus = new InProcessBus();
  seen = [];
  answer = { status: 200, headers: { "content-type": "application/json", "set-cookie": "x=1" }, body: Buffer.from('{"ok":true}') };
  serveRpc(bus, subjects, RPC.inboundHandle, (req) => {
    seen.push(req);
    return answer;
  });
  app = Fastify();
  app.setErrorHandler((err, _request, reply) => sendHttpError(reply, err, logger));
  const limiter = new FailedAuthLimiter(createMemoryFastStore().counters, { max: 3, windowMs: 60_000 });
  void app.register(channelIngressSurface, {
    bus,
    subjects,
    requestTimeoutMs: 1_000,
    limiter,
    trustedProxies: new TrustedProxies([]),
    maxBodyBytes: 1_024,
    timeoutMs: 1_000,
  });
  await app.ready();
});
afterEach(async () => {
  await app.close();
  await bus.close();
});

describe("channel ingress", () => {
  it("forwards the raw request (exact body bytes, query, headers less the gateway's credentials) and answers verbatim", async () => {
    const body = '{ "update_id": 1,\n  "spacing": "kept" }';
    const res = await app.inject({
      method: "POST",
      url: "/api/channels/tg/webhook?a=1&b=two&a=3",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cret", authorization: "Bearer gateway-token", cookie: "c=1" },
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"ok":true}');
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["set-cookie"]).toBeUndefined();
    expect(seen).toHaveLength(1);
    const req = seen[0]!;
    expect(req).toMatchObject({ channelId: "tg", accountId: "", method: "POST", path: "/webhook", query: { a: "1", b: "two" } });
    expect(Buffer.from(req.body).toString("utf8")).toBe(body);
    expect(req.headers["x-telegram-bot-api-secret-token"]).toBe("s3cret");
    expect(req.headers.authorization).toBeUndefined();
    expect(req.headers.cookie).toBeUndefined();
  });

  it("names the account in /api/channels/<id>/<accountId>/webhook, and sends Slack's events to the Slack channels", async () => {
    await app.inject({ method: "POST", url: "/api/channels/ops/support/webhook", payload: "x" });
    await app.inject({ method: "GET", url: "/api/channels/wa/webhook?hub.mode=subscribe&hub.challenge=42" });
    await app.inject({ method: "POST", url: "/api/chatapp/events", headers: { "content-type": "text/plain" }, payload: "raw" });
    expect(seen.map((r) => [r.channelId, r.accountId, r.method, r.path])).toEqual([
      ["ops", "support", "POST", "/webhook"],
      ["wa", "", "GET", "/webhook"],
      ["", "", "POST", "/"],
    ]);
    expect(seen[1]!.query).toEqual({ "hub.mode": "subscribe", "hub.challenge": "42" });
  });

  it("refuses a body over the limit with 413 before delivery sees it", async () => {
    const res = await app.inject({ method: "POST", url: "/api/channels/tg/webhook", headers: { "content-type": "application/json" }, payload: "x".repeat(2_000) });
    expect(res.statusCode).toBe(413);
    expect(seen).toEqual([]);
  });

  it("counts the plugin's 401s against the client's address and then refuses it with 429", async () => {
    answer = { status: 401, headers: {}, body: Buffer.from('{"ok":false}') };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await app.inject({ method: "POST", url: "/api/channels/tg/webhook", payload: "{}" })).statusCode);
    // The failure that reaches the limit is still answered; the address is blocked from the next one.
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(seen).toHaveLength(3);
  });

  it("answers 503 when no delivery replica is there, so the platform sends the event again", async () => {
    const alone = Fastify();
    alone.setErrorHandler((err, _request, reply) => sendHttpError(reply, err, logger));
    const empty = new InProcessBus();
    void alone.register(channelIngressSurface, {
      bus: empty,
      subjects,
      requestTimeoutMs: 1_000,
      limiter: new FailedAuthLimiter(createMemoryFastStore().counters, { max: 3, windowMs: 60_000 }),
      trustedProxies: new TrustedProxies([]),
      maxBodyBytes: 1_024,
      timeoutMs: 1_000,
    });
    expect((await alone.inject({ method: "POST", url: "/api/channels/tg/webhook", payload: "{}" })).statusCode).toBe(503);
    await alone.close();
    await empty.close();
  });
});
