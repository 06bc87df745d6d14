import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectSecrets, ConfigError } from "@gw/config";
import { afterAll, describe, expect, it } from "vitest";
import { loadServiceConfig, serviceConfigReader } from "./index.js";

const dir = mkdtempSync(join(tmpdir(), "gw-host-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const path = join(dir, "gateway.json5");
writeFileSync(
  path,
  `{
    gateway: { auth: { token: "\${GATEWAY_TOKEN}" } },
    agents: { list: [{ id: "main", name: "Main", model: "openai/gpt-4o-mini" }] },
    models: { providers: { openai: { kind: "openai", baseUrl: "http://127.0.0.1:11434/v1", apiKey: "\${OPENAI_API_KEY}" } } },
    channels: { telegram: { kind: "telegram", botToken: "\${TELEGRAM_BOT_TOKEN}" } },
  }`,
);

describe("serviceConfigReader", () => {
  it("is the service and its declared sections", () => {
    const reads = ["gateway", "agents", "nats", "ops"] as const;
    expect(serviceConfigReader({ service: "sessions", reads, needs: {} })).toEqual({ service: "sessions", sections: reads });
  });

  it("refuses a list without what the host reads itself", () => {
    expect(() => serviceConfigReader({ service: "edge", reads: ["agents", "nats"], needs: {} })).toThrow(
      "edge: reads must list gateway, ops, which the host reads",
    );
    expect(() => serviceConfigReader({ service: "hooks", reads: ["gateway", "nats", "ops"], needs: { fastStore: true } })).toThrow(
      "hooks: reads must list redis, which the host reads",
    );
  });
});

describe("loadServiceConfig", () => {
  const only = { GATEWAY_TOKEN: "gw-token" };

  it("with a reader, needs only the variables of the sections it reads and holds no other secret", () => {
    const reader = serviceConfigReader({ service: "edge", reads: ["gateway", "agents", "nats", "ops"], needs: {} });
    const env = { ...only, OPENAI_API_KEY: "sk-never-here", TELEGRAM_BOT_TOKEN: "1:never-here" };
    const config = loadServiceConfig({ config: path }, env, reader);
    expect(collectSecrets(config)).toEqual(["gw-token"]);
    expect(Object.keys(config.models.providers)).toEqual(["openai"]);
  });

  it("without one (the embedded gateway), needs every variable, each named at its key", () => {
    const error = (() => {
      try {
        loadServiceConfig({}, { ...only, GATEWAY_CONFIG: path });
      } catch (err) {
        return err;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      "models.providers.openai.apiKey: environment variable OPENAI_API_KEY is not set",
      "channels.telegram.botToken: environment variable TELEGRAM_BOT_TOKEN is not set",
    ]);
  });

  it("a reader that reads the section needs its variable", () => {
    const reader = serviceConfigReader({ service: "agent-runner", reads: ["gateway", "agents", "models", "nats", "ops"], needs: {} });
    expect(() => loadServiceConfig({ config: path }, only, reader)).toThrow(
      "models.providers.openai.apiKey: environment variable OPENAI_API_KEY is not set",
    );
    expect(loadServiceConfig({ config: path }, { ...only, OPENAI_API_KEY: "sk-1" }, reader).models.providers.openai?.apiKey).toBe("sk-1");
  });
});
