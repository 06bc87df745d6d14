import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectRun, send } from "./fixtures/agent-runs.js";
import { AGENTS, type GatewayUnderTest, MODES, PASSWORD, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { type OpenOptions, WsClient } from "./fixtures/ws-client.js";

// Every secret the config can hold, each distinctive enough that a grep cannot hit by chance.
const HOOKS_TOKEN = "e2e-hooks-secret-5b0c9a7e41d2";
const OPENAI_KEY = "sk-e2e-provider-key-8f3a61c0d9e2b7";
const ANTHROPIC_KEY = "sk-ant-e2e-anthropic-key-4c2d9e71aa";
const DEAD_KEY = "sk-e2e-dead-provider-key-19fe0b";
const BOT_TOKEN = "123456789:e2e-bot-token-AAHf9x2kQ7";
const SIGNING_SECRET = "e2e-signing-secret-71c4be03aa96";
const SECRETS = {
  token: TOKEN,
  password: PASSWORD,
  hooks: HOOKS_TOKEN,
  openaiKey: OPENAI_KEY,
  anthropicKey: ANTHROPIC_KEY,
  deadKey: DEAD_KEY,
  botToken: BOT_TOKEN,
  signingSecret: SIGNING_SECRET,
};

/** The forms a secret may take when something prints it: as is, URL-encoded, base64 (each once). */
function leakForms(secret: string): Array<[string, string]> {
  const forms = { plain: secret, "url-encoded": encodeURIComponent(secret), base64: Buffer.from(secret).toString("base64") };
  return Object.entries(forms).filter(([how, form]) => how === "plain" || form !== secret);
}

function leaks(text: string): string[] {
  return Object.entries(SECRETS).flatMap(([name, secret]) =>
    leakForms(secret)
      .filter(([, form]) => text.includes(form))
      .map(([how]) => `${name} (${how})`),
  );
}

describe.each(MODES)("secrets stay out of logs, answers, events and metrics (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  // Everything the gateway sent to clients, as sent: WS frames (events included), HTTP bodies and headers.
  const seen: string[] = [];
  const clients: WsClient[] = [];

  /** A client whose every received frame is recorded raw, before any parsing. */
  const open = async (opts: OpenOptions = {}) => {
    const client = await WsClient.open(gw.wsUrl(), opts);
    client.socket.on("message", (data) => seen.push(String(data)));
    clients.push(client);
    return client;
  };
  const http = async (path: string, opts: Parameters<typeof httpRequest>[1] = {}) => {
    const res = await httpRequest(`${gw.httpUrl()}${path}`, opts);
    seen.push(res.body, JSON.stringify(res.headers));
    return res;
  };
  const complete = (body: Record<string, unknown>) =>
    http("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway(mode, {
      health: true,
      agents: [
        ...AGENTS,
        { id: "keyed", name: "Keyed", model: "upstream/gpt-test", tools: ["time.now"] },
        { id: "claude", name: "Claude", model: "claude/claude-test", tools: ["time.now"] },
        { id: "dead", name: "Dead", model: "dead/gpt-test" },
      ],
      models: {
        providers: {
          // The fake upstream answers, or quotes the credential it was sent in an error (leakkey401/500).
          upstream: { kind: "openai", baseUrl: fake.baseUrl, apiKey: OPENAI_KEY, timeoutMs: 5_000 },
          claude: { kind: "anthropic", baseUrl: fake.baseUrl, apiKey: ANTHROPIC_KEY, timeoutMs: 5_000 },
          // Nothing listens on port 9: connection failures, where a careless error would print the key.
          dead: { kind: "openai", baseUrl: "http://127.0.0.1:9/v1", apiKey: DEAD_KEY, timeoutMs: 2_000 },
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
    if (stopped) return;
    stopped = true;
    for (const client of clients) client.close();
    await gw?.stop();
    await fake?.close();
  };
  afterAll(stop);

  it("refuses wrong credentials, which are other secrets, without echoing one", async () => {
    const good = await open();
    expect((await good.connect(TOKEN)).ok).toBe(true);
    await good.request("agents.list");
    await good.request("agent.identity.get", { agentId: "keyed" });
    expect((await good.connect(TOKEN)).ok).toBe(false); // "already connected"
    const byPassword = await open();
    expect((await byPassword.request("connect", { role: "node", auth: { password: PASSWORD } })).ok).toBe(true);

    // Enough wrong credentials to reach the failed-auth limit: a message that echoed the attempt
    // would print them.
    const attacker = await open({ localAddress: "127.0.0.61" });
    const wrong = [`${TOKEN}x`, `x${PASSWORD}`, HOOKS_TOKEN, OPENAI_KEY, ANTHROPIC_KEY, BOT_TOKEN, SIGNING_SECRET];
    for (let i = 0; i < 21; i++) expect((await attacker.connect(wrong[i % wrong.length])).ok).toBe(false);
    for (const secret of [HOOKS_TOKEN, OPENAI_KEY, `${TOKEN}-nope`]) {
      const res = await http("/v1/models", {
        headers: { authorization: `Bearer ${secret}`, "x-gateway-token": secret },
        localAddress: "127.0.0.62",
      });
      expect(res.status).toBe(401);
    }
    expect((await http("/v1/models", { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect(leaks(seen.join("\n"))).toEqual([]);
  });

  it("runs agents that succeed, call tools and fail upstream without a secret in any answer or event", async () => {
    const client = await open();
    expect((await client.connect(TOKEN)).ok).toBe(true);
    const run = async (agentId: string, message: string) => {
      const runId = `secrets-${mode}-${agentId}-${message.split(" ")[0]}`;
      const response = send(client, "agent", { message, sessionKey: `secrets:${agentId}`, agentId, runId });
      await collectRun(client, runId); // every event up to the end, recorded raw on the way
      return { runId, response: await response };
    };
    for (const agentId of ["keyed", "claude"]) {
      expect((await run(agentId, "hello there")).response.ok).toBe(true);
      expect((await run(agentId, "tools:time__now please")).response.ok).toBe(true);
      // The upstream quotes the key it was sent, in a 401 (not retried) and in a 500 (retried).
      for (const word of ["leakkey401", "leakkey500"]) {
        const { runId, response } = await run(agentId, `${word} now`);
        expect(response.error).toMatchObject({ code: "MODEL_ERROR", message: expect.stringContaining(`HTTP ${word.slice(-3)}`) });
        await send(client, "agent.wait", { runId, timeoutSeconds: 5 });
      }
      await send(client, "sessions.preview", { key: `secrets:${agentId}`, limit: 50 });
    }
    expect((await run("dead", "anyone there")).response.error?.code).toBe("MODEL_ERROR");
    expect((await run("main", "echo me")).response.ok).toBe(true);

    // The keys really went upstream and came back in error bodies: the checks below are not vacuous.
    expect(fake.requests.some((r) => r.headers.authorization === `Bearer ${OPENAI_KEY}`)).toBe(true);
    expect(fake.requests.some((r) => r.headers["x-api-key"] === ANTHROPIC_KEY)).toBe(true);
    expect(leaks(seen.join("\n"))).toEqual([]);
  });

  it("answers chat completions, streaming and not, without a secret in any body", async () => {
    for (const model of ["keyed", "claude"]) {
      for (const stream of [false, true]) {
        const ok = await complete({ model, stream, messages: [{ role: "user", content: "hello there" }] });
        expect(ok.status).toBe(200);
        for (const word of ["leakkey401", "leakkey500"]) {
          const failed = await complete({ model, stream, messages: [{ role: "user", content: `${word} please` }] });
          // The upstream's error (which quoted the key) stays in the log: HTTP clients get the
          // generic message and the request id (docs/decisions.md, OpenAI-compatible HTTP).
          expect(`${failed.status} ${failed.body}`).toMatch(
            new RegExp(`^${stream ? 200 : 502} .*the model provider failed \\(request id req_[0-9a-f]{32}\\)`, "s"),
          );
        }
      }
    }
    expect(leaks(seen.join("\n"))).toEqual([]);
  });

  it("keeps secrets out of every process's metrics", async () => {
    const ports = [...gw.edges.map((e) => e.metricsPort), gw.runner?.metricsPort].filter(
      (p): p is number => p !== undefined,
    );
    expect(ports.length).toBe(mode === "embedded" ? 1 : 2);
    for (const port of ports) {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
      expect(text).toContain("gw_requests_total");
      expect(leaks(text)).toEqual([]);
    }
  });

  it("keeps secrets out of every line every process printed, shutdown included", async () => {
    await stop();
    const logs = gw.fullLogs();
    // The runs above did log (trace level): the grep has something to look at.
    expect(logs).toMatch(/"msg":"connected"/);
    expect(leaks(logs)).toEqual([]);
  });
});
