import { fileURLToPath } from "node:url";
import { loadConfigFile } from "@gw/config";
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
});
