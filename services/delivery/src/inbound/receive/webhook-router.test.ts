import type { ChannelAdapter, InboundEndpoint, InboundMessage, RawInbound } from "@gw/channels";
import { parseConfig } from "@gw/config";
import type { InboundRequest } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { createMemoryFastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { inboundMessage } from "../../../test/inbound-fixtures.js";
import { ChannelDirectory } from "../../channel-directory.js";
import { slackPlugin } from "../../channels/slack/plugin.js";
import { telegramPlugin } from "../../channels/telegram/plugin.js";
import { StatusBook } from "../../status-book.js";
import type { InboundOrigin, InboundSink } from "../store/sink.js";
import { WebhookRouter } from "./webhook-router.js";

const logger = createLogger({ service: "test", level: "silent" });

/** An endpoint that takes requests carrying its secret in `x-secret`, and throws on `x-crash`. */
function endpoint(secret: string): InboundEndpoint {
  return {
    async handle(req: RawInbound) {
      if (req.headers["x-crash"] !== undefined) throw new Error("a plugin bug");
      if (req.headers["x-secret"] !== secret) return { reply: { status: 401, body: '{"ok":false}' }, messages: [] };
      return { reply: { status: 200, body: `{"ok":true,"by":"${secret}"}` }, messages: [inboundMessage(Buffer.from(req.body).toString("utf8"))] };
    },
  };
}

function adapter(settings: Record<string, unknown>): ChannelAdapter {
  const secret = settings.signingSecret ?? settings.webhookSecret;
  return {
    limits: { textChunk: 100 },
    validateRecipient: (to) => to,
    send: async () => ({ messageId: "1", messageIds: ["1"] }),
    probe: async () => ({ reachable: true }),
    ...(typeof secret === "string" ? { inbound: { webhook: endpoint(secret) } } : {}),
  };
}

function setup(sink: InboundSink) {
  // The real plugins' settings and webhook routes, with adapters that answer as scripted here.
  const plugins = [
    { ...telegramPlugin, create: ({ settings }: { settings: object }) => adapter(settings as Record<string, unknown>) },
    { ...slackPlugin, create: ({ settings }: { settings: object }) => adapter(settings as Record<string, unknown>) },
  ];
  const config = parseConfig(
    `{ channels: {
        tg: { kind: "telegram", botToken: "t", webhookSecret: "tg-secret" },
        ops: { kind: "telegram", accounts: { alerts: { botToken: "a", webhookSecret: "alerts-secret" }, support: { botToken: "s", webhookSecret: "support-secret" } } },
        quiet: { kind: "telegram", botToken: "q" },
        slack1: { kind: "slack", botToken: "x1", signingSecret: "one" },
        slack2: { kind: "slack", botToken: "x2", signingSecret: "two" },
      } }`,
    { env: {} },
  );
  const directory = ChannelDirectory.build(config.channels, plugins, () => {
    throw new Error("no HTTP here");
  });
  const status = new StatusBook(createMemoryFastStore());
  return { router: new WebhookRouter({ directory, sink, status, logger }), status };
}

const request = (over: Partial<InboundRequest>): InboundRequest => ({
  channelId: "tg",
  accountId: "",
  method: "POST",
  path: "/webhook",
  query: {},
  headers: {},
  body: Buffer.from("event-1"),
  ...over,
});

class RecordingSink implements InboundSink {
  readonly accepted: Array<{ origin: InboundOrigin; eventIds: string[] }> = [];
  fail = false;
  async accept(origin: InboundOrigin, messages: readonly InboundMessage[]) {
    if (this.fail) throw new Error("the store is away");
    this.accepted.push({ origin, eventIds: messages.map((m) => m.eventId) });
  }
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");

describe("WebhookRouter", () => {
  it("stores what a verified request carries before answering with the plugin's reply", async () => {
    const sink = new RecordingSink();
    const { router } = setup(sink);
    const reply = await router.handle(request({ headers: { "x-secret": "tg-secret" } }));
    expect(reply.status).toBe(200);
    expect(text(reply.body)).toBe('{"ok":true,"by":"tg-secret"}');
    expect(sink.accepted).toEqual([{ origin: { channelId: "tg", accountId: "default" }, eventIds: ["event-1"] }]);
  });

  it("goes to the default account, or to the account the route names", async () => {
    const sink = new RecordingSink();
    const { router } = setup(sink);
    expect((await router.handle(request({ channelId: "ops", headers: { "x-secret": "alerts-secret" } }))).status).toBe(200);
    expect((await router.handle(request({ channelId: "ops", accountId: "support", headers: { "x-secret": "support-secret" } }))).status).toBe(200);
    expect((await router.handle(request({ channelId: "ops", accountId: "support", headers: { "x-secret": "alerts-secret" } }))).status).toBe(401);
    expect(sink.accepted.map((a) => a.origin.accountId)).toEqual(["alerts", "support"]);
  });

  it("answers 404 for unknown channels and accounts and for accounts that take no webhooks", async () => {
    const { router } = setup(new RecordingSink());
    expect((await router.handle(request({ channelId: "nope" }))).status).toBe(404);
    expect((await router.handle(request({ channelId: "ops", accountId: "nope" }))).status).toBe(404);
    expect(text((await router.handle(request({ channelId: "quiet" }))).body)).toMatch(/takes no webhooks/);
  });

  it("gives Slack's shared route to the app whose secret verifies it, and blames every app when none does", async () => {
    const sink = new RecordingSink();
    const { router, status } = setup(sink);
    const events = (secret: string) => request({ channelId: "", path: "/", headers: { "x-secret": secret } });
    expect((await router.handle(events("two"))).status).toBe(200);
    expect(sink.accepted.map((a) => a.origin.channelId)).toEqual(["slack2"]);
    expect((await router.handle(events("three"))).status).toBe(401);
    await status.settled();
    expect((await status.read("slack1", "default")).lastInboundError).toMatch(/401/);
    expect((await status.read("slack2", "default")).lastInboundError).toMatch(/401/);
    expect((await status.read("slack2", "default")).lastInboundAt).toBeGreaterThan(0);
  });

  it("answers 503 when the store cannot take the messages, and 500 when a plugin throws, each the account's own error", async () => {
    const sink = new RecordingSink();
    const { router, status } = setup(sink);
    sink.fail = true;
    expect((await router.handle(request({ headers: { "x-secret": "tg-secret" } }))).status).toBe(503);
    expect((await router.handle(request({ channelId: "ops", headers: { "x-crash": "1" } }))).status).toBe(500);
    await status.settled();
    expect((await status.read("tg", "default")).lastInboundError).toMatch(/cannot store/);
    expect((await status.read("ops", "alerts")).lastInboundError).toMatch(/500/);
    expect((await status.read("ops", "support")).lastInboundError).toBe("");
  });
});
