import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, type GatewayUnderTest, MODES, PASSWORD, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { WsClient } from "./fixtures/ws-client.js";

// Every secret the config can hold, each distinctive enough that a grep cannot hit by chance.
const HOOKS_TOKEN = "e2e-hooks-secret-5b0c9a7e41d2";
const PROVIDER_KEY = "sk-e2e-provider-key-8f3a61c0d9e2b7";
const BOT_TOKEN = "123456789:e2e-bot-token-AAHf9x2kQ7";
const SIGNING_SECRET = "e2e-signing-secret-71c4be03aa96";
const SECRETS = {
  token: TOKEN,
  password: PASSWORD,
  hooks: HOOKS_TOKEN,
  apiKey: PROVIDER_KEY,
  botToken: BOT_TOKEN,
  signingSecret: SIGNING_SECRET,
};

/** The forms a secret may take when something prints it: as is, URL-encoded, base64. */
function leakForms(secret: string): string[] {
  return [secret, encodeURIComponent(secret), Buffer.from(secret).toString("base64")];
}

function leaks(text: string): string[] {
  return Object.entries(SECRETS).flatMap(([name, secret]) =>
    leakForms(secret)
      .filter((form) => text.includes(form))
      .map((form) => `${name} (${form === secret ? "plain" : "encoded"})`),
  );
}

describe.each(MODES)("secrets stay out of logs, errors, metrics and events (%s)", (mode) => {
  let gw: GatewayUnderTest;
  // Everything the gateway sent to clients: frames, HTTP bodies and headers, metrics.
  const seen: string[] = [];

  beforeAll(async () => {
    gw = await startGateway(mode, {
      health: true,
      agents: [
        ...AGENTS,
        { id: "keyed", name: "Keyed", model: "upstream/gpt-test", description: "uses the keyed provider" },
      ],
      models: {
        providers: {
          // Nothing listens on port 9: calls fail, which is where a careless error would print the key.
          upstream: { kind: "openai", baseUrl: "http://127.0.0.1:9/v1", apiKey: PROVIDER_KEY, timeoutMs: 2_000 },
        },
      },
      extraConfig: {
        hooks: { enabled: true, token: HOOKS_TOKEN },
        channels: {
          telegram: { kind: "telegram", botToken: BOT_TOKEN, apiBaseUrl: "http://127.0.0.1:9" },
          workspace: { kind: "slack", botToken: `${BOT_TOKEN}-2`, signingSecret: SIGNING_SECRET },
        },
        ops: { logLevel: "trace" },
      },
    });
  });
  let stopped = false;
  const stop = async () => {
    if (!stopped) await gw?.stop();
    stopped = true;
  };
  afterAll(stop);

  it("runs a full session with good and bad credentials without echoing a secret", async () => {
    const record = (value: unknown) => seen.push(typeof value === "string" ? value : JSON.stringify(value));
    const good = await WsClient.open(gw.wsUrl());
    record(await good.connect(TOKEN));
    record(await good.request("agents.list"));
    record(await good.request("agent.identity.get", { agentId: "keyed" }));
    record(await good.connect(TOKEN)); // "already connected"

    const byPassword = await WsClient.open(gw.wsUrl());
    record(await byPassword.request("connect", { role: "node", auth: { password: PASSWORD } }));

    // Wrong credentials that contain, or are, other secrets: a message that echoed the attempt
    // would print them. Enough of them to reach the failed-auth limit.
    const attacker = await WsClient.open(gw.wsUrl(), { localAddress: "127.0.0.61" });
    const wrong = [`${TOKEN}x`, `x${PASSWORD}`, HOOKS_TOKEN, PROVIDER_KEY, BOT_TOKEN, SIGNING_SECRET];
    for (let i = 0; i < 21; i++) record(await attacker.connect(wrong[i % wrong.length]));
    for (const secret of [HOOKS_TOKEN, PROVIDER_KEY, `${TOKEN}-nope`]) {
      const res = await httpRequest(`${gw.httpUrl()}/v1/models`, {
        headers: { authorization: `Bearer ${secret}`, "x-gateway-token": secret },
        localAddress: "127.0.0.62",
      });
      record(res.body);
      record(res.headers);
    }
    const models = await httpRequest(`${gw.httpUrl()}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(models.status).toBe(200);
    record(models.body);

    // Calls that reach the keyed provider, where they exist yet: the failure must not carry the key.
    const payload = (await good.request("agents.list")).payload;
    record(payload);
    const probe = await WsClient.open(gw.wsUrl());
    const helloMethods = (await probe.connect(TOKEN)).payload?.methods as string[];
    probe.close();
    if (helloMethods.includes("agent")) {
      record(await good.request("agent", { message: "hi", sessionKey: "secrets:test", agentId: "keyed" }));
      record(await good.request("agent", { message: "hi", sessionKey: "secrets:echo" }));
    }
    const completions = await httpRequest(`${gw.httpUrl()}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "keyed", messages: [{ role: "user", content: "hi" }] }),
    });
    record(completions.body);

    // Events and late frames the clients received on the way.
    for (const client of [good, byPassword, attacker]) {
      await new Promise((r) => setTimeout(r, 200));
      record(await client.next(() => true, 200).catch(() => "none"));
      client.close();
    }
    expect(seen.join("\n").length).toBeGreaterThan(0);
    expect(leaks(seen.join("\n"))).toEqual([]);
  });

  it("keeps secrets out of every process's metrics", async () => {
    const ports = [...gw.edges.map((e) => e.metricsPort), gw.runner?.metricsPort].filter(
      (p): p is number => p !== undefined,
    );
    expect(ports.length).toBeGreaterThan(0);
    for (const port of ports) {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toContain("gw_requests_total");
      expect(leaks(text)).toEqual([]);
    }
  });

  it("keeps secrets out of every line every process printed, shutdown included", async () => {
    await stop();
    const logs = gw.fullLogs();
    // The run above did log (trace level): the grep has something to look at.
    expect(logs).toMatch(/"msg":"connected"/);
    expect(leaks(logs)).toEqual([]);
  });
});
