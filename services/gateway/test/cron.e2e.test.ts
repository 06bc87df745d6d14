import { DEFAULT_TELEGRAM_BOTS, type FakeTelegram, startFakeTelegram, waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "./fixtures/agent-runs.js";
import { launchBrowser } from "./fixtures/browser.js";
import { cliJson, runCli } from "./fixtures/cli.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { openApp } from "./fixtures/webapp.js";
import { WsClient } from "./fixtures/ws-client.js";

/** A one-shot long past: with catchUp "last" it fires once, at start. */
const PAST = { id: "past", schedule: "2020-01-01T00:00:00Z", agentId: "main", message: "past once", catchUp: "last" };

interface JobView {
  id: string;
  source: string;
  schedule: string;
  nextFireAt?: number;
  lastResult?: string;
  lastRunId?: string;
  lastScheduledAt?: number;
}

async function call(client: WsClient, method: string, params: Record<string, unknown>) {
  const frame = await send(client, method, params);
  return { ok: frame.ok, payload: frame.payload as Record<string, unknown>, error: frame.error as { code: string; message: string } | undefined };
}

async function jobs(client: WsClient): Promise<JobView[]> {
  return (await call(client, "cron.list", {})).payload.jobs as JobView[];
}

async function userMessages(client: WsClient, key: string): Promise<Array<{ body: string; sender: string }>> {
  const preview = await send(client, "sessions.preview", { key, limit: 100 });
  if (!preview.ok) return [];
  return (preview.payload!.messages as Array<{ role: string; body: string; sender: string }>).filter((m) => m.role === "user");
}

describe.each(MODES)("scheduled runs over the WebSocket protocol (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let client: WsClient;
  let telegram: FakeTelegram;
  /** When the first test saw the past one-shot's run end; the last test checks it never fired again. */
  let pastRanAt: number | undefined;
  beforeAll(async () => {
    telegram = await startFakeTelegram();
    const channels = { default: "tg", tg: { kind: "telegram", botToken: DEFAULT_TELEGRAM_BOTS[0]!.token, apiBaseUrl: telegram.baseUrl } };
    // Distributed: the hooks replica starts once the others serve, as a deployment's would after
    // them; started beside them, its at-start firing could reach the runner before sessions answer.
    gw = await startGateway(mode, { hooksReplicas: 0, deliveryReplicas: 1, extraConfig: { channels, cron: { jobs: [PAST] } } });
    if (mode === "distributed") await gw.addHooksReplica!();
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  });
  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await telegram?.close();
  });

  it("fires a config one-shot in the past once at start, and shows its result", async () => {
    const done = await waitFor(async () => (await jobs(client)).find((j) => j.id === "past" && j.lastResult === "ok"), { timeoutMs: 20_000 });
    expect(done).toMatchObject({ source: "config", lastScheduledAt: Date.parse(PAST.schedule) });
    expect(done.nextFireAt).toBeUndefined();
    const waited = await call(client, "agent.wait", { runId: done.lastRunId, timeoutMs: 5_000 });
    expect(waited.payload.status).toBe("ok");
    pastRanAt = Date.now();
  });

  it("adds, lists, updates, runs now and removes a job", async () => {
    const added = await call(client, "cron.add", { id: "hourly", schedule: "every 1h", agentId: "ops", message: "hourly check" });
    expect(added.ok).toBe(true);
    const job = added.payload.job as JobView;
    expect(job).toMatchObject({ id: "hourly", source: "api", sessionKey: "cron:hourly", enabled: true, catchUp: "last" });
    expect(job.nextFireAt! % 3_600_000).toBe(0);
    expect((await jobs(client)).map((j) => j.id)).toEqual(["past", "hourly"]);

    const updated = await call(client, "cron.update", { id: "hourly", schedule: "30 9 * * *", timezone: "Europe/Berlin" });
    expect(updated.payload.job).toMatchObject({ schedule: "30 9 * * *", timezone: "Europe/Berlin", message: "hourly check" });
    const nine = new Date((updated.payload.job as JobView).nextFireAt!);
    expect(new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" }).format(nine)).toBe("09:30");

    const ran = await call(client, "cron.run", { id: "hourly" });
    expect(ran.payload.sessionKey).toBe("cron:hourly");
    const waited = await call(client, "agent.wait", { runId: ran.payload.runId, timeoutMs: 10_000 });
    expect(waited.payload.status).toBe("ok");
    expect(await userMessages(client, "cron:hourly")).toEqual([expect.objectContaining({ body: "hourly check", sender: "cron:hourly@now" })]);
    const after = await waitFor(async () => (await jobs(client)).find((j) => j.id === "hourly" && j.lastResult === "ok"), { timeoutMs: 10_000 });
    expect(after.lastRunId).toBe(ran.payload.runId);

    expect((await call(client, "cron.remove", { id: "hourly" })).payload).toEqual({ removed: true, id: "hourly" });
    expect((await jobs(client)).map((j) => j.id)).toEqual(["past"]);
  });

  it("refuses bad schedules, unknown ids and changes to config jobs, changing nothing", async () => {
    const base = { id: "bad", agentId: "main", message: "m" };
    const refused = async (method: string, params: Record<string, unknown>) => {
      const res = await call(client, method, params);
      expect(res.ok).toBe(false);
      return res.error!;
    };
    expect(await refused("cron.add", { ...base, schedule: "61 * * * *" })).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/^schedule: minute: 61/) });
    expect(await refused("cron.add", { ...base, schedule: "every 5 minutes" })).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/every <n><unit>/) });
    expect(await refused("cron.add", { ...base, schedule: "2026-02-30T10:00:00Z" })).toMatchObject({ code: "INVALID_REQUEST" });
    expect(await refused("cron.add", { ...base, schedule: "0 9 * * *", timezone: "Mars/Base" })).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/^timezone: /) });
    expect(await refused("cron.add", { ...base, schedule: "0 9 * * *", deliver: { channel: "nowhere", to: "x" } })).toMatchObject({ code: "CHANNEL_NOT_FOUND" });
    expect(await refused("cron.add", { ...base, schedule: "0 9 * * *", agentId: "nobody" })).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/agentId/) });
    expect(await refused("cron.add", { ...base, id: "has space", schedule: "0 9 * * *" })).toMatchObject({ code: "INVALID_REQUEST" });
    expect(await refused("cron.add", { ...PAST })).toMatchObject({ code: "CONFLICT" });

    expect(await refused("cron.update", { id: "nope", enabled: false })).toMatchObject({ code: "NOT_FOUND" });
    expect(await refused("cron.remove", { id: "nope" })).toMatchObject({ code: "NOT_FOUND" });
    expect(await refused("cron.run", { id: "nope" })).toMatchObject({ code: "NOT_FOUND" });
    expect(await refused("cron.update", { id: "past", enabled: false })).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/read-only/) });
    expect(await refused("cron.remove", { id: "past" })).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/read-only/) });

    expect((await call(client, "cron.add", { ...base, schedule: "0 9 * * *" })).ok).toBe(true);
    expect(await refused("cron.add", { ...base, schedule: "0 10 * * *" })).toMatchObject({ code: "CONFLICT" });
    expect(await refused("cron.update", { id: "bad", schedule: "* * *" })).toMatchObject({ code: "INVALID_REQUEST" });
    expect((await jobs(client)).find((j) => j.id === "bad")).toMatchObject({ schedule: "0 9 * * *" });
    expect((await call(client, "cron.remove", { id: "bad" })).ok).toBe(true);

    // Control connections only: a job runs agents with nobody asking.
    const webchat = await WsClient.open(gw.wsUrl());
    try {
      expect((await webchat.connect(TOKEN, "webchat")).ok).toBe(true);
      for (const method of ["cron.list", "cron.add", "cron.run"]) expect((await call(webchat, method, { ...PAST, id: "w" })).error?.code, method).toBe("FORBIDDEN");
    } finally {
      webchat.close();
    }
  });
  it("is operated by the CLI: gateway cron add, list, run and remove", async () => {
    const env = { GATEWAY_URL: gw.httpUrl(), GATEWAY_TOKEN: TOKEN };
    const added = await runCli(["cron", "add", "cli-job", "0 8 * * mon-fri", "--timezone", "Europe/Berlin", "--agent", "main", "--message", "from the cli"], env);
    expect(added.stdout).toMatch(/^added cli-job; next firing \d{4}-/);
    expect((await runCli(["cron", "list"], env)).stdout).toMatch(/cli-job\s+0 8 \* \* mon-fri \(Europe\/Berlin\)\s+main\s+cron:cli-job\s+api/);
    const ran = await cliJson<{ runId: string; sessionKey: string }>(["cron", "run", "cli-job", "--json"], env);
    expect(ran.sessionKey).toBe("cron:cli-job");
    expect((await call(client, "agent.wait", { runId: ran.runId, timeoutMs: 10_000 })).payload.status).toBe("ok");
    expect((await runCli(["cron", "remove", "cli-job"], env)).stdout).toBe("removed cli-job\n");
    const missing = await runCli(["cron", "remove", "cli-job"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/NOT_FOUND/);
  });
  it("lists the jobs with their next firing in the web app's Scheduled tab, and runs one from there", async () => {
    expect((await call(client, "cron.add", { id: "web-job", schedule: "every 1h", agentId: "main", message: "from the tab" })).ok).toBe(true);
    const browser = await launchBrowser();
    try {
      const { page, problems } = await openApp(browser, gw.httpUrl());
      await page.click("#tab-cron");
      const row = page.locator('#view-cron li.cron-job[data-job="web-job"]');
      await row.waitFor();
      expect(await row.textContent()).toMatch(/every 1h · main → cron:web-job · api.*next /);
      expect(await page.locator('#view-cron li.cron-job[data-job="past"]').textContent()).toMatch(/no next firing.*last ok/);
      await row.locator("button", { hasText: "Run now" }).click();
      const ran = await waitFor(async () => (await jobs(client)).find((j) => j.id === "web-job" && j.lastRunId !== undefined), { timeoutMs: 10_000 });
      expect(ran.lastRunId).toBeDefined();
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
      await call(client, "cron.remove", { id: "web-job" });
    }
  });
  it("delivers a job's answer to its channel and recipient", async () => {
    const job = { id: "to-telegram", schedule: "every 1h", agentId: "main", message: "the nightly summary", deliver: { channel: "tg", to: "4242" } };
    expect((await call(client, "cron.add", job)).ok).toBe(true);
    const ran = await call(client, "cron.run", { id: job.id });
    expect((await call(client, "agent.wait", { runId: ran.payload.runId, timeoutMs: 10_000 })).payload.status).toBe("ok");
    const sent = await waitFor(() => telegram.delivered.find((d) => d.chat === "4242" && d.text?.includes("the nightly summary")), { timeoutMs: 10_000 });
    expect(sent.text).toBe("the nightly summary");
    await call(client, "cron.remove", { id: job.id });
  });
  // Last: the tests above gave every replica's scheduler many more passes (at most a second
  // apart); what is left of two and a half seconds since the first run ended is waited out.
  it("never fires the config one-shot in the past again", async () => {
    expect(pastRanAt, "the first test saw it run").toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, pastRanAt! + 2_500 - Date.now())));
    expect(await userMessages(client, "cron:past")).toEqual([expect.objectContaining({ body: "past once", sender: "cron:past@2020-01-01T00:00:00.000Z" })]);
  });
});
