import { describe, expect, it } from "vitest";
import { collectSecrets, defaultConfig, parseConfig } from "./index.js";

describe("collectSecrets", () => {
  it("finds auth, hook, provider and channel secrets and URL credentials", () => {
    const config = parseConfig(
      `{
        gateway: { auth: { token: "gw-token", password: "gw-pass" } },
        hooks: { enabled: true, token: "hook-token" },
        models: { providers: { openai: { kind: "openai", baseUrl: "http://127.0.0.1:1/v1", apiKey: "sk-1" } } },
        channels: {
          tg: { kind: "telegram", botToken: "bot-1", apiBaseUrl: "https://api.telegram.org" },
          sl: { kind: "slack", signingSecret: "sign-1", appToken: "app-1", oauth: { accessToken: "acc-1" } },
          mx: { kind: "matrix", password: "mx-pass", user: "@bot:example.org" },
        },
        redis: { url: "redis://:r%40dis@127.0.0.1:6379" },
        nats: { url: "nats://nats-token@127.0.0.1:4222" },
      }`,
      { env: {} },
    );
    expect(collectSecrets(config).sort()).toEqual(
      [
        "gw-token",
        "gw-pass",
        "hook-token",
        "sk-1",
        "bot-1",
        "sign-1",
        "app-1",
        "acc-1",
        "mx-pass",
        "r%40dis",
        "r@dis",
        "nats-token",
      ].sort(),
    );
  });

  it("returns nothing for the default config", () => {
    expect(collectSecrets(defaultConfig())).toEqual([]);
  });
});
