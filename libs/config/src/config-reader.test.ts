import { describe, expect, it } from "vitest";
import { collectSecrets, ConfigError, type ConfigIssue, type ConfigReader, parseConfig } from "./index.js";

// A model provider and a channel whose secrets come from the environment, as DESIGN §7 writes them.
const TEXT = `{
  gateway: { auth: { token: "\${GATEWAY_TOKEN}" } },
  hooks: { enabled: true, token: "\${HOOKS_TOKEN}",
           mappings: [{ path: "github", action: { kind: "agent", channel: "telegram", to: "@ops" } }] },
  agents: { list: [{ id: "main", name: "Main", model: "openai/gpt-4o-mini" }] },
  models: { providers: { openai: { kind: "openai", baseUrl: "http://127.0.0.1:11434/v1", apiKey: "\${OPENAI_API_KEY}" } } },
  channels: { default: "telegram",
              telegram: { kind: "telegram", botToken: "\${TELEGRAM_BOT_TOKEN}", apiBaseUrl: "https://api.telegram.org" } },
}`;

const ALL_ENV = {
  GATEWAY_TOKEN: "gw-token-1",
  HOOKS_TOKEN: "hooks-token-1",
  OPENAI_API_KEY: "sk-provider-key-1",
  TELEGRAM_BOT_TOKEN: "123:telegram-bot-token-1",
};

const EDGE: ConfigReader = {
  service: "edge",
  sections: ["gateway", "hooks", "agents", "runner", "delivery", "nats", "redis", "ops"],
};
const RUNNER: ConfigReader = { service: "agent-runner", sections: ["gateway", "agents", "models", "nats", "ops"] };

function issuesOf(text: string, env: Record<string, string>, reader?: ConfigReader): ConfigIssue[] {
  try {
    parseConfig(text, { env, reader });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("substitution in the sections a service reads", () => {
  it("without a reader, needs every variable the file names (the embedded gateway, config check)", () => {
    expect(issuesOf(TEXT, { GATEWAY_TOKEN: "t", HOOKS_TOKEN: "h" })).toEqual([
      { path: "models.providers.openai.apiKey", message: "environment variable OPENAI_API_KEY is not set" },
      { path: "channels.telegram.botToken", message: "environment variable TELEGRAM_BOT_TOKEN is not set" },
    ]);
  });

  it("loads with only the variables of the sections read, and names the ids the others hold", () => {
    const config = parseConfig(TEXT, { env: { GATEWAY_TOKEN: "gw", HOOKS_TOKEN: "hk" }, reader: EDGE });
    expect(config.gateway.auth.token).toBe("gw");
    expect(config.hooks.token).toBe("hk");
    // Cross-section checks still see the provider and channel names (hook -> channel, agent -> provider).
    expect(Object.keys(config.models.providers)).toEqual(["openai"]);
    expect(config.models.providers.openai).toEqual({ kind: "openai", baseUrl: "http://127.0.0.1:11434/v1" });
    expect(config.channels).toEqual({ default: "telegram", telegram: { kind: "telegram", apiBaseUrl: "https://api.telegram.org" } });
  });

  it("never puts a value from the environment into a section not read, even when the variable is set", () => {
    const config = parseConfig(TEXT, { env: ALL_ENV, reader: EDGE });
    const view = JSON.stringify(config);
    expect(view).not.toContain(ALL_ENV.OPENAI_API_KEY);
    expect(view).not.toContain(ALL_ENV.TELEGRAM_BOT_TOKEN);
    expect(collectSecrets(config).sort()).toEqual([ALL_ENV.GATEWAY_TOKEN, ALL_ENV.HOOKS_TOKEN].sort());
    expect(config.models.providers.openai).not.toHaveProperty("apiKey");
    expect(config.channels.telegram).not.toHaveProperty("botToken");
  });

  it("still needs, by key path and name, every variable of a section read", () => {
    expect(issuesOf(TEXT, { GATEWAY_TOKEN: "gw" }, RUNNER)).toEqual([
      { path: "models.providers.openai.apiKey", message: "environment variable OPENAI_API_KEY is not set" },
    ]);
    // hooks.enabled needs a token: a reference in a section not read counts as one, then goes.
    const runner = parseConfig(TEXT, { env: { GATEWAY_TOKEN: "gw", OPENAI_API_KEY: "sk" }, reader: RUNNER });
    expect(runner.hooks).toMatchObject({ enabled: true });
    expect(runner.hooks).not.toHaveProperty("token");
    expect(issuesOf(TEXT, { OPENAI_API_KEY: "sk" }, EDGE)).toEqual([
      { path: "gateway.auth.token", message: "environment variable GATEWAY_TOKEN is not set" },
      { path: "hooks.token", message: "environment variable HOOKS_TOKEN is not set" },
    ]);
  });

  it("gives a :- default in a section not read, without looking at the environment", () => {
    const text = `{ models: { providers: { local: { kind: "openai", baseUrl: "\${LLM_URL:-http://127.0.0.1:11434/v1}" } } } }`;
    const reader: ConfigReader = { service: "edge", sections: ["gateway"] };
    const config = parseConfig(text, { env: { LLM_URL: "https://llm.internal/v1" }, reader });
    expect(config.models.providers.local?.baseUrl).toBe("http://127.0.0.1:11434/v1");
  });

  it("leaves alone a reference in a section not read that is no valid value as written (a URL, a number)", () => {
    // One ConfigMap for every pod: the edge's pod has no OPENAI_BASE_URL, and must start.
    const text = `{ agents: { list: [{ id: "main", name: "Main", model: "openai/gpt-4o-mini" }] },
      models: { providers: { openai: { kind: "openai", baseUrl: "\${OPENAI_BASE_URL}" } } },
      delivery: { sendTimeoutMs: "\${SEND_TIMEOUT_MS}" } }`;
    const edge = parseConfig(text, { env: {}, reader: { service: "edge", sections: ["gateway", "agents", "nats", "ops"] } });
    expect(edge.models.providers.openai).toEqual({ kind: "openai" });
    expect(edge.delivery).not.toHaveProperty("sendTimeoutMs");
    // The services that read them still substitute and check them.
    expect(issuesOf(text, {}, RUNNER)).toEqual([{ path: "models.providers.openai.baseUrl", message: "environment variable OPENAI_BASE_URL is not set" }]);
    expect(issuesOf(text, { OPENAI_BASE_URL: "not a url" }, RUNNER)).toEqual([
      { path: "models.providers.openai.baseUrl", message: expect.stringMatching(/http\(s\) URL/) },
    ]);
  });

  it("says why a value refused as written names a variable of a section not read, when no value of any kind would do", () => {
    const text = `{ delivery: { pacing: "\${PACING}" } }`;
    expect(issuesOf(text, { PACING: "off" }, RUNNER)).toEqual([
      {
        path: "delivery.pacing",
        message: expect.stringContaining(
          'as written: agent-runner does not read "delivery", so it leaves ${PACING} unresolved ' +
            "(write the value itself, or give the reference a default: ${PACING:-...})",
        ),
      },
    ]);
  });

  it("reports a malformed reference in any section, read or not", () => {
    const text = `{ channels: { tg: { kind: "telegram", botToken: "\${OPEN" } } }`;
    expect(issuesOf(text, {}, EDGE)).toEqual([
      { path: "channels.tg.botToken", message: 'unterminated "${" (write "$${" for a literal "${")' },
    ]);
  });

  it("drops withheld array items in a section not read, and keeps the others", () => {
    const hosts = `["\${INTERNAL_HOST}", "docs.example.org", "\${OTHER_HOST}", "\${SET_HOST:-api.example.org}"]`;
    const text = `{ runner: { tools: { httpFetch: { allowHosts: ${hosts} } } } }`;
    const reader: ConfigReader = { service: "sessions", sections: ["gateway", "sessions"] };
    const config = parseConfig(text, { env: { INTERNAL_HOST: "10.1.2.3", OTHER_HOST: "10.1.2.4" }, reader });
    expect(config.runner.tools.httpFetch.allowHosts).toEqual(["docs.example.org", "api.example.org"]);
  });
});
