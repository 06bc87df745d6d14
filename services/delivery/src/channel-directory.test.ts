import type { ChannelAdapter } from "@gw/channels";
import { ConfigError, type ConfigIssue, parseConfig } from "@gw/config";
import { describe, expect, it } from "vitest";
import { ChannelDirectory, checkChannels } from "./channel-directory.js";
import { CHANNEL_PLUGINS } from "./channels/index.js";
import { DEFAULT_MEDIA_LIMITS, type MediaLimits, type PluginContext } from "./channels/registry.js";
import { telegramPlugin } from "./channels/telegram/plugin.js";

function build(media?: MediaLimits): PluginContext[] {
  const seen: PluginContext[] = [];
  const plugin = { ...telegramPlugin, create: (ctx: PluginContext) => (seen.push(ctx), {} as ChannelAdapter) };
  const config = parseConfig(`{ channels: { tg: { kind: "telegram", accounts: { a: { botToken: "t1" }, b: { botToken: "t2" } } } } }`, { env: {} });
  const http = () => {
    throw new Error("no HTTP here");
  };
  if (media === undefined) ChannelDirectory.build(config.channels, [plugin], http);
  else ChannelDirectory.build(config.channels, [plugin], http, media);
  return seen;
}

describe("ChannelDirectory media limits", () => {
  it("hands every account's plugin the delivery.media limits", () => {
    const limits = { maxBytes: 1_234, timeoutMs: 5_678 };
    expect(build(limits).map((ctx) => [ctx.accountId, ctx.media])).toEqual([
      ["a", limits],
      ["b", limits],
    ]);
  });

  it("falls back to the config's own defaults", () => {
    const { maxBytes, timeoutMs } = parseConfig("{}", { env: {} }).delivery.media;
    expect(DEFAULT_MEDIA_LIMITS).toEqual({ maxBytes, timeoutMs });
    expect(build()[0]?.media).toEqual(DEFAULT_MEDIA_LIMITS);
  });
});

async function checkIssues(text: string): Promise<ConfigIssue[]> {
  const error = await checkChannels(parseConfig(text, { env: {} }), CHANNEL_PLUGINS).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).issues;
}

describe("checkChannels (what delivery checks at start, and gateway config check)", () => {
  it("reports every channel's problems at once", async () => {
    const issues = await checkIssues(
      `{ channels: { tg: { kind: "telegram", botToken: "1:x", apiBaseUrl: "ftp://x" }, sms: { kind: "pager" }, ok: { kind: "telegram", botToken: "1:y" } } }`,
    );
    expect(issues.map((issue) => issue.path)).toEqual(["channels.tg.apiBaseUrl", "channels.sms.kind"]);
  });

  it("names an unknown agent at the key that sets it: the channel's, or the account's own", async () => {
    const issues = await checkIssues(`{ channels: {
      tg: { kind: "telegram", agent: "nosuch", accounts: { a: { botToken: "1:x" }, b: { botToken: "1:y" } } },
      ops: { kind: "telegram", botToken: "1:z", agent: "main", accounts: { c: {}, d: { agent: "ghost" } } },
    } }`);
    expect(issues).toEqual([
      { path: "channels.tg.agent", message: 'names agent "nosuch", which is not in agents.list (main)' },
      { path: "channels.ops.accounts.d.agent", message: 'names agent "ghost", which is not in agents.list (main)' },
    ]);
  });

  it("lists the channels and accounts of a good config", async () => {
    const entries = await checkChannels(
      parseConfig(`{ channels: { tg: { kind: "telegram", botToken: "1:x", agent: "main" } } }`, { env: {} }),
      CHANNEL_PLUGINS,
    );
    expect(entries.map((entry) => `${entry.id}:${entry.accounts.length}`)).toEqual(["tg:1"]);
  });
});
