import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvent, assistantText, collectRun, send } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { runToExit } from "./fixtures/processes.js";
import { WsClient } from "./fixtures/ws-client.js";

/**
 * Fallback chains, cooldowns shared through the FastStore, and key rotation, through the real
 * gateway with fake providers that fail on command (issue 25 §1). Distributed mode runs two
 * runners: the cooldown one runner's run started is seen by the other.
 */

const FAKES = ["p1", "p2", "p3", "keys", "p4", "p5"] as const;
type FakeName = (typeof FAKES)[number];

const openai = (fake: FakeModelServer, extra: Record<string, unknown>) => ({ kind: "openai", baseUrl: fake.baseUrl, timeoutMs: 1_000, ...extra });

describe.each(MODES)("model fallback chains (%s)", (mode) => {
  let gw: GatewayUnderTest;
  const fakes = {} as Record<FakeName, FakeModelServer>;
  let runs = 0;

  beforeAll(async () => {
    for (const name of FAKES) fakes[name] = await startFakeModelServer();
    gw = await startGateway(mode, {
      runners: 2,
      health: true,
      agents: [
        { id: "main", name: "Main", model: "builtin/echo" },
        { id: "chain", name: "Chain", model: ["p1/m1", "p2/m2", "p3/m3"] },
        { id: "rotate", name: "Rotate", model: "keys/mk" },
        { id: "streamed", name: "Streamed", model: ["p4/m4", "p5/m5"] },
      ],
      models: {
        providers: {
          p1: openai(fakes.p1, { apiKey: "sk-p1" }),
          // A hang is a timeout after 500 ms of silence.
          p2: openai(fakes.p2, { apiKey: "sk-p2", timeoutMs: 500 }),
          p3: { kind: "anthropic", baseUrl: fakes.p3.baseUrl, apiKey: "ak-p3", timeoutMs: 1_000 },
          keys: openai(fakes.keys, { apiKeys: ["sk-key-a", "sk-key-b"] }),
          p4: openai(fakes.p4, {}),
          p5: openai(fakes.p5, {}),
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await Promise.all(Object.values(fakes).map((f) => f.close()));
  });

  /** One run of `agentId` to its end or error, over a fresh connection (control: errors in full). */
  async function run(
    agentId: string,
    message: string,
    extra: Record<string, unknown> = {},
  ): Promise<{ runId: string; events: AgentEvent[]; last: AgentEvent; answer: Record<string, unknown> }> {
    const runId = `fallback-${mode}-${++runs}`;
    const client = await WsClient.open(gw.wsUrl());
    try {
      await client.connect(TOKEN, "control");
      const response = send(client, "agent", { message, sessionKey: `fallback:${runId}`, agentId, runId, ...extra });
      const events = await collectRun(client, runId);
      const last = events.at(-1)!;
      const answer = await response;
      expect(answer.ok).toBe(last.data.phase === "end");
      return { runId, events, last, answer: (answer.payload ?? {}) as Record<string, unknown> };
    } finally {
      client.close();
    }
  }

  it("passes a 429 with Retry-After and a timeout on to the third model, and names them in the lifecycle end", async () => {
    fakes.p1.script({ kind: "status", status: 429, retryAfter: "120" });
    fakes.p2.script({ kind: "hang" });
    const { runId, events, last, answer } = await run("chain", "hello chain");
    const route = {
      model: "p3/m3",
      fallbacks: [
        { model: "p1/m1", reason: "rate_limit", status: 429 },
        { model: "p2/m2", reason: "timeout" },
      ],
    };
    expect(last.data).toMatchObject({ phase: "end", ...route });
    // The start names the agent and the model the run asked first (nothing was cooling yet).
    expect(events.filter((e) => e.stream === "lifecycle").map((e) => e.data)).toEqual([{ phase: "start", agentId: "chain", model: "p1/m1" }, last.data]);
    // The run's result names them too: the agent answer and agent.wait.
    expect(answer).toMatchObject(route);
    const client = await WsClient.open(gw.wsUrl());
    try {
      await client.connect(TOKEN, "control");
      expect(await send(client, "agent.wait", { runId })).toMatchObject({ ok: true, payload: { status: "ok", result: route } });
    } finally {
      client.close();
    }
    expect(assistantText(events)).toBe("You said: hello chain");
    expect([fakes.p1.requests.length, fakes.p2.requests.length, fakes.p3.requests.length]).toEqual([1, 1, 1]);
  });

  it("counts model calls by provider, key and outcome, and cooldowns, in the runners' metrics", async () => {
    const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const runners = gw.ops.filter((o) => o.name === "gateway" || o.name.startsWith("agent-runner"));
    const text = (await Promise.all(runners.map((o) => scrape(o.metricsPort)))).join("\n");
    const total = (name: string, labels: Record<string, string>) =>
      text
        .split("\n")
        .filter((line) => line.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
    expect(total("gw_model_requests_total", { provider: "p1", outcome: "rate_limit" })).toBe(1);
    expect(total("gw_model_requests_total", { provider: "p2", outcome: "timeout" })).toBe(1);
    expect(total("gw_model_requests_total", { provider: "p3", outcome: "ok" })).toBe(1);
    expect(total("gw_model_cooldowns_total", { provider: "p1" })).toBe(1);
    expect(total("gw_model_call_duration_seconds_count", { provider: "p3", outcome: "ok" })).toBe(1);
    expect(text).not.toContain("sk-p1");
  });

  it("skips the cooling provider without calling it on the next run, on whichever runner (distributed: the other one)", async () => {
    const first = await run("chain", "cool down p1");
    expect(first.last.data).toMatchObject({ phase: "end", model: "p2/m2" });
    if (mode === "distributed") {
      // The runner that ran the last run stops: the next run is the other runner's.
      // Log lines reach the output in batches, a little late.
      const ranOn = () => gw.runners!.findIndex((proc) => proc.fullOutput().includes(`"runId":"${first.runId}"`));
      await expect.poll(ranOn, { timeout: 5_000 }).toBeGreaterThanOrEqual(0);
      await gw.runners![ranOn()]!.stop();
    }
    const { events, last } = await run("chain", "after the stop");
    // The start already names the model that answers: p1 is cooling, so p2 is asked first.
    expect(events[0]!.data).toEqual({ phase: "start", agentId: "chain", model: "p2/m2" });
    expect(last.data).toMatchObject({ phase: "end", model: "p2/m2" });
    expect(last.data.fallbacks).toBeUndefined();
    expect(assistantText(events)).toBe("You said: after the stop");
    // p1 answered the first run's 429 only: both later runs went straight to p2.
    expect(fakes.p1.requests.length).toBe(1);
  });

  it("shows each provider's and key's cooldown in models.status and the CLI (keys by id, never the key)", async () => {
    const client = await WsClient.open(gw.wsUrl());
    try {
      await client.connect(TOKEN, "control");
      const answer = await send(client, "models.status", {});
      expect(answer.ok).toBe(true);
      const providers = (answer.payload as { providers: Array<Record<string, unknown>> }).providers;
      const byName = new Map(providers.map((p) => [p.name, p]));
      expect([...byName.keys()].sort()).toEqual(["builtin", "keys", "p1", "p2", "p3", "p4", "p5"]);
      // p1's only key answered a 429 with Retry-After 120: it cools, its provider does not.
      expect(byName.get("p1")).toMatchObject({ kind: "openai", state: "ready", keys: [{ state: "cooling", rateLimits: 1 }] });
      const p1Key = (byName.get("p1")!.keys as Array<{ id: string; coolingMs: number }>)[0]!;
      expect(p1Key.coolingMs).toBeGreaterThan(60_000);
      expect(byName.get("p2")).toMatchObject({ state: "ready", failures: 1, keys: [{ state: "ready" }] });
      expect(byName.get("keys")!.keys).toHaveLength(2);
      expect(JSON.stringify(providers)).not.toContain("sk-");
      const cli = await runToExit("services/gateway/src/cli.ts", ["models", "status", "--url", gw.wsUrl()], { GATEWAY_TOKEN: TOKEN });
      expect(cli.code, cli.output).toBe(0);
      expect(cli.output).toMatch(new RegExp(`${p1Key.id}\\s+cooling`));
      expect(cli.output).not.toContain("sk-");
    } finally {
      client.close();
    }
  });

  it("spreads calls over a provider's two keys, and a 429 on one moves the call to the other", async () => {
    for (let i = 0; i < 4; i++) expect((await run("rotate", `rotate ${i}`)).last.data.phase).toBe("end");
    const used = fakes.keys.requests.map((r) => r.headers.authorization);
    expect(new Set(used)).toEqual(new Set(["Bearer sk-key-a", "Bearer sk-key-b"]));
    fakes.keys.script({ kind: "status", status: 429, retryAfter: "120" });
    const { last } = await run("rotate", "limited");
    expect(last.data).toMatchObject({ phase: "end", model: "keys/mk", fallbacks: [{ model: "keys/mk", reason: "rate_limit" }] });
    const [limited, answered] = fakes.keys.requests.slice(-2).map((r) => r.headers.authorization);
    expect(answered).not.toBe(limited);
    // The limited key cools for every runner: the next calls all take the other key.
    for (let i = 0; i < 2; i++) await run("rotate", `after ${i}`);
    expect(fakes.keys.requests.slice(-2).map((r) => r.headers.authorization)).toEqual([answered, answered]);
  });

  it("does not fall back once output reached the client: the run ends with the error", async () => {
    fakes.p4.script({ kind: "drop", chunk: "partial " });
    const { events, last } = await run("streamed", "cut me off");
    expect(last.data).toMatchObject({ phase: "error", code: "MODEL_ERROR", error: expect.stringMatching(/dropped/) });
    expect(assistantText(events)).toBe("partial ");
    expect(fakes.p5.requests.length).toBe(0);
  });

  it("takes a chain as the agent request's model and as a session's model (sessions.patch), as a list", async () => {
    fakes.p5.script({ kind: "status", status: 503 });
    const asked = await run("main", "a chain per request", { model: ["p5/m5", "p3/m3"] });
    expect(asked.last.data).toMatchObject({ phase: "end", model: "p3/m3", fallbacks: [{ model: "p5/m5", reason: "server", status: 503 }] });
    const client = await WsClient.open(gw.wsUrl());
    try {
      await client.connect(TOKEN, "control");
      const sessionKey = `fallback:patched-${mode}`;
      expect((await send(client, "agent", { message: "create", sessionKey, agentId: "main" })).ok).toBe(true);
      const bad = await send(client, "sessions.patch", { key: sessionKey, model: ["p3/m3", "nobody/m"] });
      expect(bad).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
      const patched = await send(client, "sessions.patch", { key: sessionKey, model: ["p5/m5", "p3/m3"] });
      expect(patched).toMatchObject({ ok: true, payload: { updated: true, changes: { model: "p5/m5,p3/m3" } } });
      fakes.p5.script({ kind: "status", status: 429, retryAfter: "0" });
      const runId = `fallback-patched-${mode}`;
      const response = send(client, "agent", { message: "patched", sessionKey, runId });
      const events = await collectRun(client, runId);
      expect(events.at(-1)?.data).toMatchObject({ phase: "end", model: "p3/m3", fallbacks: [{ model: "p5/m5", reason: "rate_limit" }] });
      expect((await response).ok).toBe(true);
    } finally {
      client.close();
    }
  });
});
