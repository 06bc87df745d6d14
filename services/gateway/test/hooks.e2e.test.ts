import { randomUUID } from "node:crypto";
import { DEFAULT_TELEGRAM_BOTS, type FakeTelegram, freePort, startFakeTelegram, waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, type Mode, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest, type HttpResult } from "./fixtures/http.js";
import { spawnService, type ServiceProcess, waitHealthy } from "./fixtures/processes.js";
import { killHard } from "./fixtures/session-load.js";
import { WsClient } from "./fixtures/ws-client.js";

const HOOK_TOKEN = "e2e-hook-token-5f1c0d9e";
const CHAT = "4242";
const BOT = DEFAULT_TELEGRAM_BOTS[0]!;

/** A GitHub `issues` webhook as GitHub sends it (the fields a mapping reads, and some it does not). */
function issueDelivery(deliveryId: string, title = "Login fails on Safari") {
  return {
    headers: {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/4f2a1b9",
      "x-github-event": "issues",
      "x-github-delivery": deliveryId,
      "x-github-hook-id": "448899",
    },
    body: JSON.stringify({
      action: "opened",
      issue: {
        number: 1347,
        title,
        user: { login: "octocat", id: 583231 },
        labels: [{ name: "bug" }, { name: "browser" }],
        body: "Steps to reproduce...",
      },
      repository: { full_name: "octo-org/widgets", private: false },
      sender: { login: "octocat" },
    }),
  };
}

function hooksConfig(fake: FakeTelegram | undefined, heartbeatSeconds: number) {
  return {
    hooks: {
      enabled: true,
      token: HOOK_TOKEN,
      maxBodyBytes: 8_192,
      heartbeat: { intervalSeconds: heartbeatSeconds },
      mappings: [
        {
          path: "github",
          idempotencyField: "headers.x-github-delivery",
          action: {
            kind: "agent",
            message:
              "GitHub {{ headers.x-github-event }}: #{{ payload.issue.number }} \"{{ payload.issue.title }}\" was {{ payload.action }} " +
              "by {{ payload.issue.user.login }} in {{ payload.repository.full_name }} [{{ payload.issue.labels[0].name }}]{{ payload.issue.milestone.title }}",
            sessionKey: "github:{{ payload.repository.full_name }}",
            name: "GitHub",
            ...(fake ? { channel: "tg", to: CHAT } : { deliver: false }),
          },
        },
        { path: "alerts", action: { kind: "wake", message: "alert {{ payload.name }} on {{ query.host }}", wakeMode: "next-heartbeat" } },
      ],
    },
    ...(fake ? { channels: { default: "tg", tg: { kind: "telegram", botToken: BOT.token, apiBaseUrl: fake.baseUrl } } } : {}),
  };
}

let sourceIp = 10;
/** Each call its own loopback source address, so refusals never add up to a failed-auth block. */
const nextIp = () => `127.0.3.${sourceIp++}`;

function hook(gw: GatewayUnderTest, path: string, opts: { headers?: Record<string, string>; body?: string; token?: "bearer" | "x-gateway-token" | "none" } = {}): Promise<HttpResult> {
  const auth: Record<string, string> =
    opts.token === "none" ? {} : opts.token === "x-gateway-token" ? { "x-gateway-token": HOOK_TOKEN } : { authorization: `Bearer ${HOOK_TOKEN}` };
  return httpRequest(`${gw.httpUrl()}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth, ...opts.headers },
    body: opts.body ?? "{}",
    localAddress: nextIp(),
  });
}

const json = (res: HttpResult) => JSON.parse(res.body) as Record<string, unknown>;
const errorType = (res: HttpResult) => (json(res).error as { type: string }).type;

/** The run's answer text, once it is over. */
async function answerOf(client: WsClient, runId: string): Promise<string> {
  const waited = await send(client, "agent.wait", { runId, timeoutSeconds: 30 }, 35_000);
  expect(waited).toMatchObject({ ok: true, payload: { completed: true, status: "ok" } });
  const payloads = (waited.payload!.result as { payloads: Array<{ text: string }> }).payloads;
  return payloads.map((p) => p.text).join("");
}

interface PreviewMessage {
  role: string;
  sender: string;
  body: string;
}

async function userMessages(client: WsClient, key: string): Promise<PreviewMessage[]> {
  const preview = await send(client, "sessions.preview", { key, limit: 200 });
  if (!preview.ok) return [];
  const messages = (preview.payload!.messages as PreviewMessage[]).filter((m) => m.role === "user");
  return messages.reverse();
}

describe.each(MODES)("hooks through the gateway (%s)", (mode) => {
  let fake: FakeTelegram;
  let gw: GatewayUnderTest;
  let client: WsClient;

  beforeAll(async () => {
    fake = await startFakeTelegram();
    gw = await startGateway(mode, { extraConfig: hooksConfig(fake, 3_600) });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  });
  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await fake?.close();
  });

  it("POST /hooks/wake with mode now runs the main session at once, with either header form", async () => {
    for (const token of ["bearer", "x-gateway-token"] as const) {
      const text = `deploy ${token} finished`;
      const res = await hook(gw, "/hooks/wake", { token, body: JSON.stringify({ text, mode: "now" }) });
      expect(res.status).toBe(200);
      const body = json(res);
      expect(body).toMatchObject({ ok: true, mode: "now", sessionKey: "hook:main" });
      expect(await answerOf(client, body.runId as string)).toMatch(new RegExp(`^Heartbeat: 1 system event .*\\n\\[.*\\] wake: ${text}$`));
    }
    const turns = await userMessages(client, "hook:main");
    expect(turns.map((m) => [m.sender, m.body.split(": ").at(-1)])).toEqual([
      ["heartbeat", "deploy bearer finished"],
      ["heartbeat", "deploy x-gateway-token finished"],
    ]);
  });

  it("POST /hooks/agent answers as soon as the run is accepted, in a fresh hook session each call", async () => {
    const sessions: string[] = [];
    for (const token of ["bearer", "x-gateway-token"] as const) {
      const res = await hook(gw, "/hooks/agent", { token, body: JSON.stringify({ message: `check ${token}`, name: "Nightly CI", deliver: false }) });
      expect(res.status).toBe(202);
      const body = json(res);
      expect(body).toMatchObject({ ok: true, wakeMode: "now", sessionKey: expect.stringMatching(/^hook:[0-9a-f-]{36}$/) });
      expect(await answerOf(client, body.runId as string)).toBe(`check ${token}`);
      expect(await userMessages(client, body.sessionKey as string)).toMatchObject([{ sender: "Nightly CI", body: `check ${token}` }]);
      sessions.push(body.sessionKey as string);
    }
    expect(sessions[0]).not.toBe(sessions[1]);
  });

  it("POST /hooks/agent delivers the answer on channel/to by default (deliver: true)", async () => {
    fake.reset();
    const res = await hook(gw, "/hooks/agent", { body: JSON.stringify({ message: "ship it", channel: "tg", to: CHAT, sessionKey: "ops:release" }) });
    expect(res.status).toBe(202);
    expect(await answerOf(client, json(res).runId as string)).toBe("ship it");
    await waitFor(() => fake.delivered.find((d) => d.text === "ship it"), { timeoutMs: 15_000 });
    expect(fake.delivered.map((d) => [d.chat, d.text])).toEqual([[CHAT, "ship it"]]);
    const nowhere = await hook(gw, "/hooks/agent", { body: JSON.stringify({ message: "no destination" }) });
    expect([nowhere.status, errorType(nowhere)]).toEqual([400, "invalid_request_error"]);
    expect((json(nowhere).error as { message: string }).message).toMatch(/^deliver: to is required/);
  });

  it("a GitHub issue through the github mapping runs the templated message and its answer reaches the channel", async () => {
    fake.reset();
    const delivery = issueDelivery(randomUUID());
    const res = await hook(gw, "/hooks/github", { headers: delivery.headers, body: delivery.body, token: "x-gateway-token" });
    expect(res.status).toBe(202);
    const body = json(res);
    expect(body).toMatchObject({ ok: true, sessionKey: "github:octo-org/widgets" });
    const expected = 'GitHub issues: #1347 "Login fails on Safari" was opened by octocat in octo-org/widgets [bug]';
    expect(await answerOf(client, body.runId as string)).toBe(expected);
    expect((await userMessages(client, "github:octo-org/widgets")).at(-1)).toMatchObject({ sender: "GitHub", body: expected });
    await waitFor(() => fake.delivered.find((d) => d.text === expected), { timeoutMs: 15_000 });
    expect(fake.delivered.map((d) => [d.chat, d.text])).toEqual([[CHAT, expected]]);
  });

  it("the same webhook posted three times (same delivery id) runs one agent turn", async () => {
    fake.reset();
    const id = randomUUID();
    const title = `Redelivered ${id.slice(0, 8)}`;
    const delivery = issueDelivery(id, title);
    const answers: HttpResult[] = [];
    answers.push(await hook(gw, "/hooks/github", delivery));
    answers.push(...(await Promise.all([hook(gw, "/hooks/github", delivery), hook(gw, "/hooks/github", delivery)])));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    const runIds = new Set(answers.map((a) => json(a).runId));
    expect(runIds.size).toBe(1);
    expect(answers.map((a) => json(a).duplicate ?? false)).toEqual([false, true, true]);
    await answerOf(client, [...runIds][0] as string);
    await waitFor(() => fake.delivered.find((d) => d.text?.includes(title)), { timeoutMs: 15_000 });
    // Give a second turn every chance to show up before counting.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(fake.delivered.filter((d) => d.text?.includes(title))).toHaveLength(1);
    expect((await userMessages(client, "github:octo-org/widgets")).filter((m) => m.body.includes(title))).toHaveLength(1);
  });

  it("a refused /hooks/agent is forgotten: the corrected retry under the same Idempotency-Key runs, and then holds the key", async () => {
    const key = { "idempotency-key": `fix-${mode}-${randomUUID()}` };
    const wrong = JSON.stringify({ message: "corrected later", agentId: "nope", deliver: false });
    const refused = await hook(gw, "/hooks/agent", { headers: key, body: wrong });
    expect([refused.status, errorType(refused)]).toEqual([400, "invalid_request_error"]);
    const corrected = JSON.stringify({ message: "corrected later", agentId: "ops", deliver: false });
    const accepted = await hook(gw, "/hooks/agent", { headers: key, body: corrected });
    expect(accepted.status).toBe(202);
    expect(json(accepted)).toMatchObject({ ok: true });
    expect(await answerOf(client, json(accepted).runId as string)).toBe("corrected later");
    const repeat = await hook(gw, "/hooks/agent", { headers: key, body: corrected });
    expect([repeat.status, json(repeat).runId, json(repeat).duplicate]).toEqual([202, json(accepted).runId, true]);
    const late = await hook(gw, "/hooks/agent", { headers: key, body: wrong });
    expect(late.status).toBe(409);
    expect((json(late).error as { message: string }).message).toMatch(/already used for a different request/);
  });

  it("POST /hooks/agent takes a fractional timeoutSeconds", async () => {
    const res = await hook(gw, "/hooks/agent", { body: JSON.stringify({ message: "a second and a half", deliver: false, timeoutSeconds: 1.5 }) });
    expect(res.status).toBe(202);
    expect(await answerOf(client, json(res).runId as string)).toBe("a second and a half");
  });

  it("refuses a wake text or an agent message of whitespace only, naming the field, running nothing", async () => {
    const mainBefore = (await userMessages(client, "hook:main")).length;
    const wake = await hook(gw, "/hooks/wake", { body: JSON.stringify({ text: "  \n\t ", mode: "now" }) });
    const agent = await hook(gw, "/hooks/agent", { body: JSON.stringify({ message: "   ", deliver: false }) });
    for (const [res, field] of [[wake, "text"], [agent, "message"]] as const) {
      expect([res.status, errorType(res)]).toEqual([400, "invalid_request_error"]);
      expect((json(res).error as { message: string }).message).toBe(`body.${field}: ${field} must not be only whitespace`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await userMessages(client, "hook:main")).length).toBe(mainBefore);
  });

  it("refuses a wrong token, a token in the query string, an oversize body, invalid JSON and unknown paths, running nothing", async () => {
    const before = await send(client, "sessions.list", { limit: 500 });
    const mainBefore = (await userMessages(client, "hook:main")).length;
    const good = {
      "/hooks/wake": JSON.stringify({ text: "must not run", mode: "now" }),
      "/hooks/agent": JSON.stringify({ message: "must not run", deliver: false }),
      "/hooks/github": issueDelivery(randomUUID(), "must not run").body,
    };
    for (const [path, body] of Object.entries(good)) {
      const wrong = await hook(gw, path, { body, headers: { authorization: "Bearer not-the-hook-token" }, token: "none" });
      const gatewayToken = await hook(gw, path, { body, headers: { authorization: `Bearer ${TOKEN}` }, token: "none" });
      const wrongHeader = await hook(gw, path, { body, headers: { "x-gateway-token": "nope" }, token: "none" });
      const none = await hook(gw, path, { body, token: "none" });
      for (const res of [wrong, gatewayToken, wrongHeader, none]) expect([path, res.status, errorType(res)]).toEqual([path, 401, "authentication_error"]);
      const inQuery = await hook(gw, `${path}?token=${HOOK_TOKEN}`, { body, token: "none" });
      const inQueryToo = await hook(gw, `${path}?token=${HOOK_TOKEN}`, { body });
      for (const res of [inQuery, inQueryToo]) expect([path, res.status, errorType(res)]).toEqual([path, 400, "invalid_request_error"]);
      const oversize = await hook(gw, path, { body: JSON.stringify({ text: "x".repeat(9_000), message: "x", pad: "y" }) });
      expect([path, oversize.status]).toEqual([path, 413]);
      const invalid = await hook(gw, path, { body: "{ this is not json" });
      expect([path, invalid.status, errorType(invalid)]).toEqual([path, 400, "invalid_request_error"]);
    }
    for (const path of ["/hooks/nope", "/hooks/github/extra", "/hooks"]) {
      const unknown = await hook(gw, path);
      expect([path, unknown.status]).toEqual([path, 404]);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await send(client, "sessions.list", { limit: 500 });
    expect(after.payload!.total).toBe(before.payload!.total);
    expect((await userMessages(client, "hook:main")).length).toBe(mainBefore);
  });

  it("counts wrong hook tokens toward the failed-auth limit of the client's address", async () => {
    const from = `127.0.4.${mode === "embedded" ? 1 : 2}`;
    const post = (headers: Record<string, string>) =>
      httpRequest(`${gw.httpUrl()}/hooks/wake`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ text: "x", mode: "next-heartbeat" }),
        localAddress: from,
      });
    for (let i = 0; i < 20; i++) expect((await post({ authorization: "Bearer wrong" })).status).toBe(401);
    const blocked = await post({ authorization: `Bearer ${HOOK_TOKEN}` });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(0);
  });
});

/** Starts the hooks service again after a kill -9: a new process (distributed), or the whole gateway (embedded). */
async function restartHooks(gw: GatewayUnderTest, mode: Mode): Promise<{ url: string; proc?: ServiceProcess }> {
  if (mode === "distributed") {
    await killHard(gw.hooks![0]!);
    await gw.addHooksReplica!();
    return { url: gw.httpUrl() };
  }
  await killHard(gw.edges[0]!.proc);
  const port = await freePort();
  const proc = spawnService("gateway-restarted", "services/gateway/src/cli.ts", ["start", "--config", gw.configPath, "--port", String(port)], {
    E2E_GATEWAY_TOKEN: TOKEN,
  });
  await waitHealthy(proc, `http://127.0.0.1:${port}`);
  return { url: `http://127.0.0.1:${port}`, proc };
}

describe.each(MODES)("the heartbeat (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let restarted: ServiceProcess | undefined;

  afterAll(async () => {
    await restarted?.stop();
    await gw?.stop();
  });

  it("next-heartbeat texts survive a kill -9 of the hooks service and are consumed exactly once", async () => {
    gw = await startGateway(mode, { extraConfig: hooksConfig(undefined, 3_600) });
    for (const text of ["disk 91% on db1", "backup finished"]) {
      const res = await hook(gw, "/hooks/wake", { body: JSON.stringify({ text, mode: "next-heartbeat" }) });
      expect(res.status).toBe(200);
      expect(json(res)).toEqual({ ok: true, mode: "next-heartbeat", sessionKey: "hook:main" });
    }
    const alert = await hook(gw, "/hooks/alerts?host=db2", { body: JSON.stringify({ name: "load" }) });
    expect(json(alert)).toMatchObject({ ok: true, mode: "next-heartbeat" });

    const { url, proc } = await restartHooks(gw, mode);
    restarted = proc;
    const target = { ...gw, httpUrl: () => url } as GatewayUnderTest;
    const client = await WsClient.open(url.replace("http", "ws"));
    try {
      expect((await client.connect(TOKEN)).ok).toBe(true);
      // "now" runs a heartbeat turn at once: it takes everything queued, the old texts included.
      const first = json(await hook(target, "/hooks/wake", { body: JSON.stringify({ text: "woken", mode: "now" }) }));
      const answer = await answerOf(client, first.runId as string);
      expect(answer.split("\n").slice(1).map((line) => line.replace(/^\[.*?\] /, ""))).toEqual([
        "wake: disk 91% on db1",
        "wake: backup finished",
        "hooks/alerts: alert load on db2",
        "wake: woken",
      ]);
      const second = json(await hook(target, "/hooks/wake", { body: JSON.stringify({ text: "again", mode: "now" }) }));
      expect((await answerOf(client, second.runId as string)).split("\n").slice(1).map((line) => line.replace(/^\[.*?\] /, ""))).toEqual([
        "wake: again",
      ]);
      const turns = await userMessages(client, "hook:main");
      expect(turns).toHaveLength(2);
      expect(turns.map((t) => t.body.split("disk 91%").length - 1)).toEqual([1, 0]);
    } finally {
      client.close();
    }
  });
});

describe.each(MODES)("the periodic heartbeat (%s)", (mode) => {
  let gw: GatewayUnderTest;
  afterAll(async () => {
    await gw?.stop();
  });

  it("takes the queued texts on its interval, and runs nothing when nothing is queued", async () => {
    gw = await startGateway(mode, { extraConfig: hooksConfig(undefined, 2) });
    const client = await WsClient.open(gw.wsUrl());
    try {
      expect((await client.connect(TOKEN)).ok).toBe(true);
      for (const text of ["first", "second"]) {
        await hook(gw, "/hooks/wake", { body: JSON.stringify({ text, mode: "next-heartbeat" }) });
      }
      const turns = await waitFor(async () => {
        const found = await userMessages(client, "hook:main");
        return found.length > 0 ? found : undefined;
      }, { timeoutMs: 10_000 });
      expect(turns).toHaveLength(1);
      expect(turns[0]!.body).toMatch(/^Heartbeat: 2 system events .*\n.*wake: first\n.*wake: second$/);
      // Two more intervals with nothing queued: no new turn.
      await new Promise((resolve) => setTimeout(resolve, 4_500));
      expect(await userMessages(client, "hook:main")).toHaveLength(1);
    } finally {
      client.close();
    }
  });
});
