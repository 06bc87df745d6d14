import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNats } from "@gw/testing";
import { afterAll, describe, expect, it } from "vitest";
import { runToExit, spawnService, waitOutput } from "./fixtures/processes.js";

const CLI = "services/gateway/src/cli.ts";
const dir = mkdtempSync(join(tmpdir(), "gw-check-as-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Variable names no environment running the tests sets by chance.
const path = join(dir, "gateway.json5");
writeFileSync(
  path,
  `{
    gateway: { auth: { token: "\${E2E_CHECK_AS_GW_TOKEN}" } },
    agents: { list: [{ id: "main", name: "Main", model: "openai/gpt-4o-mini" }] },
    models: { providers: { openai: { kind: "openai", baseUrl: "\${E2E_CHECK_AS_MODEL_URL}", apiKey: "\${E2E_CHECK_AS_MODEL_KEY}" } } },
    channels: { default: "telegram", telegram: { kind: "telegram", botToken: "\${E2E_CHECK_AS_BOT_TOKEN}" } },
  }`,
);
const GATEWAY_ONLY = { E2E_CHECK_AS_GW_TOKEN: "gw-token" };

describe("gateway config check --as <service>", () => {
  it("without --as, names every variable the file uses that is unset", async () => {
    const res = await runToExit(CLI, ["config", "check", "--config", path], GATEWAY_ONLY);
    expect(res.code).toBe(1);
    expect(res.output).toContain("models.providers.openai.apiKey: environment variable E2E_CHECK_AS_MODEL_KEY is not set");
    expect(res.output).toContain("channels.telegram.botToken: environment variable E2E_CHECK_AS_BOT_TOKEN is not set");
  });

  it("as the agent runner, needs the provider's URL and key, and checks the URL", async () => {
    const missing = await runToExit(CLI, ["config", "check", "--config", path, "--as", "agent-runner"], GATEWAY_ONLY);
    expect(missing.code).toBe(1);
    expect(missing.output).toContain("models.providers.openai.baseUrl: environment variable E2E_CHECK_AS_MODEL_URL is not set");
    const env = { ...GATEWAY_ONLY, E2E_CHECK_AS_MODEL_KEY: "sk-1", E2E_CHECK_AS_MODEL_URL: "ftp://models.internal" };
    const bad = await runToExit(CLI, ["config", "check", "--config", path, "--as", "agent-runner"], env);
    expect(bad.code).toBe(1);
    expect(bad.output).toMatch(/models\.providers\.openai\.baseUrl: expected an http\(s\) URL/);
  });

  it("as the edge, needs only the gateway token: the edge reads no provider or channel section", async () => {
    const res = await runToExit(CLI, ["config", "check", "--config", path, "--as", "edge"], GATEWAY_ONLY);
    expect(res.output).toContain(`${path}: OK as edge (1 agent(s), default "main")`);
    expect(res.code).toBe(0);
  });

  it("as delivery, needs the channel's variables and not the provider's", async () => {
    const missing = await runToExit(CLI, ["config", "check", "--config", path, "--as=delivery"], GATEWAY_ONLY);
    expect(missing.code).toBe(1);
    expect(missing.output).toContain("channels.telegram.botToken: environment variable E2E_CHECK_AS_BOT_TOKEN is not set");
    expect(missing.output).not.toContain("E2E_CHECK_AS_MODEL_KEY");
    const env = { ...GATEWAY_ONLY, E2E_CHECK_AS_BOT_TOKEN: "123456:bot-token" };
    const ok = await runToExit(CLI, ["config", "check", "--config", path, "--as=delivery"], env);
    expect(ok.output).toContain("OK as delivery (1 agent(s), default \"main\"; 1 channel(s), 1 account(s))");
    expect(ok.code).toBe(0);
  });
});

describe("one config file for every pod", () => {
  it("starts the sessions service without the provider URL variable it does not read, as config check --as sessions says", async () => {
    const nats = await startNats();
    const shared = join(dir, "shared.json5");
    writeFileSync(shared, readFileSync(path, "utf8").replace("agents:", `nats: { url: "${nats.url}" },\n    agents:`));
    const sessions = spawnService("sessions", "services/sessions/src/main.ts", ["--config", shared], GATEWAY_ONLY);
    try {
      const check = await runToExit(CLI, ["config", "check", "--config", shared, "--as", "sessions"], GATEWAY_ONLY);
      expect(check.code).toBe(0);
      await waitOutput(sessions, /sessions serving/);
      expect(sessions.child.exitCode).toBeNull();
    } finally {
      await sessions.stop();
      await nats.stop();
    }
  });
});
