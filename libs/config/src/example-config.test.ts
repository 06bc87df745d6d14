import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseEnv } from "node:util";
import JSON5 from "json5";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { collectSecrets, defaultConfig, loadConfigFile, parseConfig } from "./index.js";
import { hasKeyPath, schemaKeyPaths } from "./known-keys.js";
import { gatewayConfigSchema } from "./schema.js";

const examplePath = fileURLToPath(new URL("../../../config/gateway.example.json5", import.meta.url));
const exampleEnvPath = fileURLToPath(new URL("../../../config/gateway.example.env", import.meta.url));
const env = {
  GATEWAY_TOKEN: "tok-123",
  HOOKS_TOKEN: "hook-456",
  OPENAI_API_KEY: "sk-789",
  ANTHROPIC_API_KEY_1: "ak-012",
  ANTHROPIC_API_KEY_2: "ak-013",
  TELEGRAM_BOT_TOKEN: "bot-000",
  SLACK_BOT_TOKEN: "xoxb-001",
  DISCORD_BOT_TOKEN: "disc-002",
  WHATSAPP_ACCESS_TOKEN: "wa-003",
  BLUEBUBBLES_PASSWORD: "bb-004",
  TELEGRAM_ALERTS_TOKEN: "bot-005",
  TELEGRAM_SUPPORT_TOKEN: "bot-006",
  TELEGRAM_WEBHOOK_SECRET: "tgs-007",
  SLACK_SIGNING_SECRET: "sss-008",
  WHATSAPP_APP_SECRET: "was-009",
  WHATSAPP_VERIFY_TOKEN: "wav-010",
  SEARCH_TOKEN: "mcp-011",
};

describe("config/gateway.example.json5", () => {
  it("validates with its environment variables supplied", () => {
    const config = loadConfigFile(examplePath, { env });
    expect(config.gateway.auth.token).toBe("tok-123");
    expect(config.gateway.auth).not.toHaveProperty("password");
    expect(config.agents.list.map((agent) => agent.model)).toEqual(["openai/gpt-4o-mini,anthropic/claude-3-5-haiku-latest", "builtin/echo"]);
    expect(config.channels.default).toBe("telegram");
    expect(collectSecrets(config).sort()).toEqual([
      "Bearer mcp-011",
      "ak-012",
      "ak-013",
      "bb-004",
      "bot-000",
      "bot-005",
      "bot-006",
      "disc-002",
      "hook-456",
      "sk-789",
      "sss-008",
      "tgs-007",
      "tok-123",
      "wa-003",
      "was-009",
      "wav-010",
      "xoxb-001",
    ]);
  });

  it("documents every key the schema accepts", () => {
    const example: unknown = JSON5.parse(readFileSync(examplePath, "utf8"));
    const paths = schemaKeyPaths(gatewayConfigSchema());
    // The walk itself must see the whole schema, nested sections, arrays and records included.
    expect(paths).toEqual(
      expect.arrayContaining(["runner.tools.httpFetch.maxBytes", "agents.list[].id", "models.providers.*.kind", "ops.bind"]),
    );
    expect(paths.filter((path) => !hasKeyPath(example, path))).toEqual([]);
  });

  it("shows each runner default as the value the schema gives it", () => {
    const config = loadConfigFile(examplePath, { env });
    // The example's MCP servers show how one is written; by default there are none.
    expect(config.runner.tools.mcp.servers).toHaveProperty("everything");
    expect({ ...config.runner, tools: { ...config.runner.tools, mcp: { servers: {} } } }).toEqual(defaultConfig().runner);
  });

  it("fails on the first missing variable with its key path", () => {
    const { GATEWAY_TOKEN: _unused, ...rest } = env;
    expect(() => loadConfigFile(examplePath, { env: rest })).toThrow(
      "gateway.auth.token: environment variable GATEWAY_TOKEN is not set",
    );
  });

  it("reads to the same config written as YAML", () => {
    const yaml = stringify(JSON5.parse(readFileSync(examplePath, "utf8")));
    expect(parseConfig(yaml, { env, format: "yaml", source: "example.yaml" })).toEqual(loadConfigFile(examplePath, { env }));
  });
});

describe("config/gateway.example.env", () => {
  it("has a placeholder for exactly the variables the example needs, so the README's check passes", () => {
    const placeholders = parseEnv(readFileSync(exampleEnvPath, "utf8"));
    const needed = new Set<string>();
    const visit = (node: unknown): void => {
      if (typeof node === "string") for (const [, name] of node.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) needed.add(name!);
      else if (node !== null && typeof node === "object") Object.values(node).forEach(visit);
    };
    visit(JSON5.parse(readFileSync(examplePath, "utf8")));
    expect(Object.keys(placeholders).sort()).toEqual([...needed].sort());
    expect(loadConfigFile(examplePath, { env: placeholders }).gateway.auth.token).toBe("placeholder");
  });
});
