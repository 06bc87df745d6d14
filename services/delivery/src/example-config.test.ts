import { fileURLToPath } from "node:url";
import { resolveAccounts } from "@gw/channels";
import { channelEntries, hasKeyPath, loadConfigFile, schemaKeyPaths } from "@gw/config";
import { describe, expect, it } from "vitest";
import { ChannelDirectory } from "./channel-directory.js";
import { CHANNEL_PLUGINS } from "./channels/index.js";
import { HttpClients } from "./http-clients.js";

const examplePath = fileURLToPath(new URL("../../../config/gateway.example.json5", import.meta.url));
const env = new Proxy({} as Record<string, string>, { get: (_target, name) => `secret-${String(name)}` });

describe("the example config's channels", () => {
  it("build one adapter per channel and account with the plugins this build ships", async () => {
    const config = loadConfigFile(examplePath, { env });
    const clients = new HttpClients();
    const directory = ChannelDirectory.build(config.channels, CHANNEL_PLUGINS, clients.factory);
    expect(directory.list().map((c) => `${c.id}:${c.kind}:${c.accounts.map((a) => a.accountId).join("+")}`)).toEqual([
      "telegram:telegram:default",
      "slack:slack:default",
      "discord:discord:default",
      "signal:signal:default",
      "whatsapp:whatsapp:default",
      "imessage:imessage:default",
      "ops:telegram:alerts+support",
    ]);
    await clients.close();
  });

  it("show every key each channel kind's settings accept", () => {
    const config = loadConfigFile(examplePath, { env });
    // Each account's settings as its plugin sees them: the channel's keys merged into the account's.
    const settings = channelEntries(config.channels).flatMap(([, channel]) =>
      resolveAccounts(channel).map((account) => ({ kind: channel.kind, settings: account.settings })),
    );
    const kinds = CHANNEL_PLUGINS.map((plugin) => plugin.kind);
    const pathsOf = (kind: string) => schemaKeyPaths(CHANNEL_PLUGINS.find((plugin) => plugin.kind === kind)!.settings);
    expect(pathsOf("telegram")).toEqual(expect.arrayContaining(["groups.requireMention", "allowFrom", "webhookSecret"]));
    // The keys every kind takes (dmPolicy, allowFrom, agent, groups) are shown once, on any channel.
    const shared = kinds.map(pathsOf).reduce((common, paths) => common.filter((path) => paths.includes(path)));
    const missing = kinds.flatMap((kind) =>
      pathsOf(kind)
        .filter((path) => !settings.some((s) => (shared.includes(path) || s.kind === kind) && hasKeyPath(s.settings, path)))
        .map((path) => `${kind}: ${path}`),
    );
    expect(missing).toEqual([]);
  });
});
