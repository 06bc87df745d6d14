import { describe, expect, it } from "vitest";
import { collectSecrets, defaultConfig, maskSecrets, parseConfig, SECRET_MASK } from "./index.js";

describe("collectSecrets", () => {
  it("finds auth, hook, provider and channel secrets and URL credentials", () => {
    const config = parseConfig(
      `{
        gateway: { auth: { token: "gw-token", password: "gw-pass" } },
        hooks: { enabled: true, token: "hook-token" },
        models: { providers: {
          openai: { kind: "openai", baseUrl: "http://127.0.0.1:1/v1", apiKey: "sk-1" },
          rotated: { kind: "anthropic", baseUrl: "http://127.0.0.1:1/v1", apiKeys: ["ak-1", "ak-2"] },
        } },
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
        "ak-1",
        "ak-2",
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

  it("finds MCP servers' header values and secret-named env values, not short headers or plain env", () => {
    const config = parseConfig(
      JSON.stringify({
        runner: {
          tools: {
            mcp: {
              servers: {
                web: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer mcp-header-secret", "X-Flag": "on" } },
                local: { command: "node", env: { SEARCH_API_KEY: "env-secret-value", LOG_LEVEL: "debug" } },
              },
            },
          },
        },
      }),
      { env: {} },
    );
    const secrets = collectSecrets(config);
    expect(secrets).toEqual(expect.arrayContaining(["Bearer mcp-header-secret", "env-secret-value"]));
    expect(secrets).not.toContain("on");
    expect(secrets).not.toContain("debug");
  });

  it("returns nothing for the default config", () => {
    expect(collectSecrets(defaultConfig())).toEqual([]);
  });
});

describe("maskSecrets", () => {
  const config = parseConfig(
    `{
      gateway: { auth: { token: "gw-token", password: "gw-pass" } },
      models: { providers: { openai: { kind: "openai", baseUrl: "http://127.0.0.1:1/v1", apiKey: "sk-1" } } },
      channels: { tg: { kind: "telegram", botToken: "bot-1", apiBaseUrl: "https://api.telegram.org" } },
      redis: { url: "redis://:r%40dis@127.0.0.1:6379" },
      nats: { url: "nats://nats-token@127.0.0.1:4222" },
    }`,
    { env: {} },
  );

  it("masks secret-named keys and URL credentials and keeps everything else", () => {
    const masked = maskSecrets(config) as typeof config;
    expect(masked.gateway.auth).toMatchObject({ token: SECRET_MASK, password: SECRET_MASK });
    expect(masked.models.providers.openai).toMatchObject({ apiKey: SECRET_MASK, baseUrl: "http://127.0.0.1:1/v1" });
    expect((masked.channels as Record<string, Record<string, unknown>>).tg).toMatchObject({ botToken: SECRET_MASK, apiBaseUrl: "https://api.telegram.org" });
    expect(masked.redis.url).toBe(`redis://${SECRET_MASK}@127.0.0.1:6379`);
    expect(masked.nats.url).toBe(`nats://${SECRET_MASK}@127.0.0.1:4222`);
    expect(masked.gateway.port).toBe(config.gateway.port);
    const text = JSON.stringify(masked);
    for (const secret of collectSecrets(config)) expect(text).not.toContain(secret);
  });

  it("masks every header value, and a secret's value wherever else it appears", () => {
    const withHeaders = { ...config, extra: { headers: { Authorization: "Bearer abc", "X-Trace": "on" }, note: "gw-token" } };
    const masked = maskSecrets(withHeaders as typeof config) as { extra: unknown };
    expect(masked.extra).toEqual({ headers: { Authorization: SECRET_MASK, "X-Trace": SECRET_MASK }, note: SECRET_MASK });
  });

  it("leaves the default config as it is", () => {
    expect(maskSecrets(defaultConfig())).toEqual(JSON.parse(JSON.stringify(defaultConfig())));
  });
});
