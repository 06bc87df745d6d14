import type { ChannelAdapter } from "@gw/channels";
import { parseConfig } from "@gw/config";
import { describe, expect, it } from "vitest";
import { ChannelDirectory } from "./channel-directory.js";
import { DEFAULT_MEDIA_LIMITS, type MediaLimits, type PluginContext, pluginTable } from "./channels/registry.js";

function build(media?: MediaLimits): PluginContext[] {
  const seen: PluginContext[] = [];
  const plugin = {
    kind: "telegram" as const,
    create: (ctx: PluginContext<"telegram">) => (seen.push(ctx as PluginContext), {} as ChannelAdapter),
  };
  const config = parseConfig(`{ channels: { tg: { kind: "telegram", accounts: { a: { botToken: "t1" }, b: { botToken: "t2" } } } } }`, { env: {} });
  const http = () => {
    throw new Error("no HTTP here");
  };
  if (media === undefined) ChannelDirectory.build(config.channels, pluginTable([plugin]), http);
  else ChannelDirectory.build(config.channels, pluginTable([plugin]), http, media);
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
