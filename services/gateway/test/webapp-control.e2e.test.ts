import { type FakeModelServer, type FakeTelegram, startFakeModelServer, startFakeTelegram, telegramUpdate, telegramWebhookRequest } from "@gw/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "./fixtures/browser.js";
import { cliJson, spawnCli } from "./fixtures/cli.js";
import { askToPair, controlEvent, pairResult } from "./fixtures/devices.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { delivered, postWebhook, TG_BOTS, TG_SECRET } from "./fixtures/inbound.js";
import { type ServiceProcess, spawnService, waitHealthy } from "./fixtures/processes.js";
import { openApp, say, snap, texts } from "./fixtures/webapp.js";
import { WsClient } from "./fixtures/ws-client.js";

const USER_HEADER = "x-forwarded-user";
const PAIR_BOT = TG_BOTS[1]!;

/** The little of the browser's DOM the page functions below use (this file is compiled for Node). */
declare const document: {
  querySelector(selector: string): { textContent: string | null } | null;
  querySelectorAll(selector: string): { length: number };
};
declare const window: Record<string, unknown>;

async function openTab(page: Page, tab: string): Promise<void> {
  await page.click(`#tab-${tab}`);
  await page.waitForSelector(`#view-${tab}:not([hidden])`);
}

describe.each(MODES)("web app control view (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let model: FakeModelServer;
  let telegram: FakeTelegram;
  let browser: TestBrowser;
  let control: WsClient;
  let replacement: ServiceProcess | undefined;

  beforeAll(async () => {
    [model, telegram, browser] = await Promise.all([startFakeModelServer(), startFakeTelegram({ bots: [PAIR_BOT], chats: [7001, 7002].map((id) => ({ id, type: "private" as const })) }), launchBrowser()]);
    gw = await startGateway(mode, {
      agents: [
        { id: "main", name: "Main", model: "fake/model", description: "answers through the fake model", tools: ["time.now"] },
        { id: "echo", name: "Echo", model: "builtin/echo", description: "says it back" },
      ],
      models: { providers: { fake: { kind: "openai", baseUrl: model.baseUrl, apiKey: "sk-fake", timeoutMs: 15_000 } } },
      // "alice" behind the identity proxy may only chat; the token may do everything.
      gateway: {
        auth: { token: "${E2E_GATEWAY_TOKEN}", trustedProxy: { enabled: true, header: USER_HEADER, roles: ["webchat"] } },
        trustedProxies: ["127.0.0.1"],
      },
      extraConfig: {
        channels: { tgpair: { kind: "telegram", botToken: PAIR_BOT.token, apiBaseUrl: telegram.baseUrl, webhookSecret: TG_SECRET } },
        delivery: { pacing: "off", sendTimeoutMs: 5_000, maxAttempts: 2 },
      },
    });
    control = await WsClient.open(gw.wsUrl());
    expect((await control.connect(TOKEN)).ok).toBe(true);
  }, 120_000);
  afterAll(async () => {
    control?.close();
    await browser?.close();
    await replacement?.stop();
    await gw?.stop();
    await Promise.all([model?.close(), telegram?.close()]);
  });

  it("shows the control view to a control user only; a webchat-only user gets the chat", async () => {
    const alice = await openApp(browser, gw.httpUrl(), { token: false, headers: { [USER_HEADER]: "alice" } });
    await alice.page.waitForSelector("#chat:not([hidden])");
    await say(alice.page, "only chatting");
    expect(await alice.page.isHidden("#tabs")).toBe(true);
    expect(alice.problems).toEqual([]);
    await alice.close();

    const operator = await openApp(browser, gw.httpUrl());
    await operator.page.waitForSelector("#tabs:not([hidden])");
    expect(await texts(operator.page, "#tabs [role=tab]")).toEqual(["Chat", "Sessions", "Runs", "Channels", "Scheduled", "Approvals"]);
    // The tabs answer the keyboard: right arrow from Chat opens Sessions.
    await operator.page.focus("#tab-chat");
    await operator.page.keyboard.press("ArrowRight");
    await operator.page.waitForSelector("#view-sessions:not([hidden])");
    expect(await operator.page.evaluate(() => document.querySelector(":focus")?.textContent)).toBe("Sessions");
    expect(operator.problems).toEqual([]);
    await operator.close();
  }, 60_000);

  it("renders a Markdown answer with raw HTML as text and nothing executed; tool calls as cards; model and timing on hover", async () => {
    const { page, problems, close } = await openApp(browser, gw.httpUrl());
    await page.waitForSelector("#tabs:not([hidden])");
    await page.selectOption("#agent", "echo");
    const hostile = [
      "# Heading",
      "Look <img src=x onerror=\"window.__pwned='img'\"> and <script>window.__pwned='script'</script> here.",
      "- one\n- **two**",
      "```js\nconst a = 1 < 2;\n```",
      "[docs](https://example.com/docs) and [bad](javascript:window.__pwned='link')",
    ].join("\n\n");
    await say(page, hostile);
    const answer = page.locator("#messages .message.assistant").last();
    expect(await answer.locator("img, script, iframe").count()).toBe(0);
    expect(await answer.locator(".body").textContent()).toContain("<img src=x onerror=\"window.__pwned='img'\">");
    expect(await answer.locator(".body").textContent()).toContain("<script>window.__pwned='script'</script>");
    expect(await answer.locator("h1").textContent()).toBe("Heading");
    expect(await answer.locator("ul li").allTextContents()).toEqual(["one", "two"]);
    expect(await answer.locator("pre code").textContent()).toBe("const a = 1 < 2;\n");
    expect(await answer.locator("a").evaluateAll((links) => links.map((a) => [a.getAttribute("href"), a.getAttribute("rel")]))).toEqual([
      ["https://example.com/docs", "noopener noreferrer"],
    ]);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();

    // A new thread, since a session keeps the agent it started with.
    await page.click("#new-thread");
    await page.selectOption("#agent", "main");
    await say(page, "what time is it? tools:time__now");
    const withTool = page.locator("#messages .message.assistant").last();
    const card = withTool.locator("details.tool-card");
    expect(await card.locator(".tool-name").textContent()).toMatch(/time/);
    expect(await card.locator(".tool-state").textContent()).toBe("done");
    expect(await card.getAttribute("open")).toBeNull();
    await card.locator("summary").click();
    expect(await card.locator(".tool-input").isVisible()).toBe(true);
    expect(await card.locator(".tool-result").textContent()).not.toBe("");
    expect(await withTool.locator(".body").textContent()).toBe("Tools said: 1 results");
    await withTool.hover();
    expect(await withTool.locator(".meta").textContent()).toMatch(/^fake\/model · \d+\.\d s/);
    expect(problems).toEqual([]);
    await snap(page, `${mode}-chat`);
    await close();
  }, 60_000);

  it("lists, searches, opens, patches, deletes and resets sessions, with new ones arriving live", async () => {
    for (const key of ["ops:alpha", "ops:beta"]) {
      expect((await control.request("agent", { message: `hi ${key}`, sessionKey: key, agentId: "echo" }, 15_000)).ok).toBe(true);
    }
    const { page, problems, close } = await openApp(browser, gw.httpUrl());
    await page.waitForSelector("#tabs:not([hidden])");
    await openTab(page, "sessions");
    await page.waitForSelector('#view-sessions [data-key="ops:alpha"]');
    // Newest first.
    const keys = await page.$$eval("#view-sessions .row-button", (rows) => rows.map((row) => row.dataset.key));
    expect(keys.indexOf("ops:beta")).toBeLessThan(keys.indexOf("ops:alpha"));

    // A session created elsewhere shows up without a reload.
    expect((await control.request("agent", { message: "hi gamma", sessionKey: "ops:gamma", agentId: "echo" }, 15_000)).ok).toBe(true);
    await page.waitForSelector('#view-sessions [data-key="ops:gamma"]');

    await page.fill("#sessions-search", "ALPHA");
    expect(await page.$$eval("#view-sessions .row-button", (rows) => rows.map((row) => row.dataset.key))).toEqual(["ops:alpha"]);
    await page.selectOption("#sessions-agent", "echo");
    await page.waitForSelector('#view-sessions [data-key="ops:alpha"]');
    await page.click('#view-sessions [data-key="ops:alpha"]');
    await page.waitForSelector("#view-sessions .detail h2");
    expect(await page.textContent("#view-sessions .detail h2")).toBe("ops:alpha");
    expect(await texts(page, "#view-sessions .preview .text")).toEqual(["hi ops:alpha", "hi ops:alpha"]);

    // Patch: another agent and thinking level; the list (filtered to echo) lets it go.
    await page.selectOption('#view-sessions .patch label:has-text("Agent") select', "main");
    await page.fill('#view-sessions .patch label:has-text("Model") input', "fake/model");
    await page.selectOption('#view-sessions .patch label:has-text("Thinking") select', "high");
    await page.click('#view-sessions .patch button[type="submit"]');
    await page.waitForFunction(() => document.querySelector('#view-sessions [data-key="ops:alpha"]') === null);
    const patched = await control.request("sessions.preview", { key: "ops:alpha" });
    expect(patched.payload).toMatchObject({ agentId: "main", model: "fake/model", thinking: "high" });
    await page.selectOption("#sessions-agent", "");
    await page.fill("#sessions-search", "");
    await page.waitForSelector('#view-sessions [data-key="ops:alpha"]');
    await snap(page, `${mode}-sessions`);

    // Delete asks first; Cancel (or Escape) keeps the session, the confirmed Delete removes it.
    await page.click('#view-sessions .actions button:has-text("Delete")');
    await page.click('#view-sessions .confirm button:has-text("Cancel")');
    await page.focus('#view-sessions .actions button:has-text("Delete")');
    await page.keyboard.press("Enter");
    await page.waitForSelector("#view-sessions .confirm");
    await page.keyboard.press("Escape");
    await page.waitForSelector("#view-sessions .confirm", { state: "detached" });
    expect((await control.request("sessions.preview", { key: "ops:alpha" })).ok).toBe(true);
    // By keyboard: Enter on Delete puts the focus on Cancel; one step back is the confirming Delete.
    await page.focus('#view-sessions .actions button:has-text("Delete")');
    await page.keyboard.press("Enter");
    await page.waitForSelector("#view-sessions .confirm");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector('#view-sessions [data-key="ops:alpha"]') === null);
    expect((await control.request("sessions.preview", { key: "ops:alpha" })).error?.code).toBe("NOT_FOUND");
    expect(await page.isHidden("#view-sessions .detail")).toBe(true);

    // Reset clears the history (after asking) and keeps the session.
    await page.click('#view-sessions [data-key="ops:beta"]');
    await page.waitForFunction(() => document.querySelector("#view-sessions .detail h2")?.textContent === "ops:beta");
    expect(await texts(page, "#view-sessions .preview .text")).toEqual(["hi ops:beta", "hi ops:beta"]);
    await page.click('#view-sessions .actions button:has-text("Reset")');
    await page.click('#view-sessions .confirm button:has-text("Reset")');
    await page.waitForFunction(() => document.querySelectorAll("#view-sessions .preview li").length === 0);
    expect((await control.request("sessions.preview", { key: "ops:beta" })).payload).toMatchObject({ key: "ops:beta", messages: [] });
    expect(problems).toEqual([]);
    await close();
  }, 90_000);

  it("approves a sender and a device, and rejects a sender, from the control view while the CLI watches the same pending lists", async () => {
    const { page, problems, close } = await openApp(browser, gw.httpUrl());
    await page.waitForSelector("#tabs:not([hidden])");
    await openTab(page, "approvals");
    // The operator's terminal beside the browser: `gateway devices pending --watch` and `gateway pairing list`.
    const cliEnv = { GATEWAY_URL: gw.wsUrl(), GATEWAY_TOKEN: TOKEN };
    const watch = spawnCli(["devices", "pending", "--watch", "--json"], cliEnv);
    const pairingList = async () => (await cliJson<{ requests: Array<{ code: string; sender: string }> }>(["pairing", "list"], cliEnv)).requests;

    try {
      await watch.waitFor("stderr", /waiting for pairing requests/);
      // A stranger writes to the pairing bot: the code goes to them, the request to the view.
      const update = telegramUpdate({ chatId: 7001, from: { id: 7001, firstName: "Dee" }, text: "let me in" });
      expect((await postWebhook(gw, "/api/channels/tgpair/webhook", telegramWebhookRequest(update, TG_SECRET))).status).toBe(200);
      await delivered(telegram, (d) => d.chat === "7001" && /pairing code/.test(d.text ?? ""));
      const [pending] = await pairingList();
      expect(pending).toMatchObject({ sender: "7001" });
      const senderRow = page.locator(`#view-approvals .senders li[data-code="${pending!.code}"]`);
      await senderRow.waitFor({ timeout: 15_000 });
      expect(await senderRow.textContent()).toContain("Dee (7001)");

      // A device asks to be paired: it arrives live.
      const device = await askToPair(gw.wsUrl(), { deviceId: `phone-${mode}`, name: "Dee's phone" });
      expect(device.answer.ok, JSON.stringify(device.answer.error)).toBe(true);
      const deviceRow = page.locator(`#view-approvals .pairings li[data-request-id="${device.requestId}"]`);
      await deviceRow.waitFor({ timeout: 10_000 });
      // The CLI's watch printed the same request.
      await watch.waitFor("stdout", new RegExp(`"requestId":"${device.requestId}"`));
      await snap(page, `${mode}-approvals`);

      await senderRow.locator('button:has-text("Approve")').click();
      await delivered(telegram, (d) => d.chat === "7001" && /You are approved/.test(d.text ?? ""));
      await senderRow.waitFor({ state: "detached" });
      expect(await pairingList()).toEqual([]);

      // Another stranger is rejected: their request goes, and nobody tells them they were approved.
      const other = telegramUpdate({ chatId: 7002, from: { id: 7002, firstName: "Eve" }, text: "me too" });
      expect((await postWebhook(gw, "/api/channels/tgpair/webhook", telegramWebhookRequest(other, TG_SECRET))).status).toBe(200);
      const rejectedRow = page.locator('#view-approvals .senders li:has-text("Eve (7002)")');
      await rejectedRow.waitFor({ timeout: 15_000 });
      await rejectedRow.locator('button:has-text("Reject")').click();
      await rejectedRow.waitFor({ state: "detached" });
      expect(await pairingList()).toEqual([]);
      // Not approved: writing again brings a new code, not an answer.
      const again = telegramUpdate({ chatId: 7002, from: { id: 7002, firstName: "Eve" }, text: "still me" });
      expect((await postWebhook(gw, "/api/channels/tgpair/webhook", telegramWebhookRequest(again, TG_SECRET))).status).toBe(200);
      await delivered(telegram, (d) => d.chat === "7002" && /pairing code/.test(d.text ?? ""), 2);
      expect(telegram.delivered.filter((d) => d.chat === "7002" && !/pairing code/.test(d.text ?? ""))).toEqual([]);

      await deviceRow.locator('button:has-text("Approve")').click();
      expect(await pairResult(device.client)).toMatchObject({ status: "approved", deviceId: `phone-${mode}` });
      expect(await controlEvent(control, "node.pair.resolved", `phone-${mode}`)).toMatchObject({ status: "approved" });
      expect((await cliJson<{ requests: unknown[] }>(["devices", "pending"], cliEnv)).requests).toEqual([]);
      await deviceRow.waitFor({ state: "detached" });

      // The paired device: rotate shows a new token once; revoke asks first.
      const paired = page.locator(`#view-approvals .devices li[data-device-id="phone-${mode}"]`);
      await paired.waitFor();
      await paired.locator('button:has-text("Rotate token")').click();
      const token = await paired.locator(".new-token input").inputValue({ timeout: 10_000 });
      expect(token).toMatch(/^gwd1\./);
      const withToken = await WsClient.open(gw.wsUrl());
      expect((await withToken.connect(token, "node")).ok).toBe(true);
      withToken.close();
      await paired.locator('button:has-text("Revoke")').click();
      await paired.locator('.confirm button:has-text("Revoke")').click();
      await paired.waitFor({ state: "detached" });
      expect((await control.request("device.list", {})).payload?.devices).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      watch.child.kill("SIGINT");
      await watch.exited;
      await close();
    }
  }, 120_000);

  it("shows every channel's status", async () => {
    const { page, problems, close } = await openApp(browser, gw.httpUrl());
    await page.waitForSelector("#tabs:not([hidden])");
    await openTab(page, "channels");
    const card = page.locator('#view-channels [data-channel="tgpair"]');
    await card.waitFor();
    expect(await card.locator("h2").textContent()).toBe("tgpair");
    expect(await card.textContent()).toContain("telegram");
    const account = card.locator('[data-account="default"]');
    expect(await account.locator("dt").allTextContents()).toEqual([
      "Account",
      "State",
      "Last probe",
      "Last success",
      "Last error",
      "Limits",
      "Last inbound",
      "Last inbound error",
    ]);
    // The webhook above was this account's inbound message.
    await page.waitForFunction(() => (document.querySelector('[data-account="default"] dd:nth-of-type(7)')?.textContent ?? "—") !== "—", undefined, { timeout: 15_000 });
    await snap(page, `${mode}-channels`);
    expect(problems).toEqual([]);
    await close();
  }, 60_000);

  it("follows a run in flight live and aborts it", async () => {
    const { page, problems, close } = await openApp(browser, gw.httpUrl());
    await page.waitForSelector("#tabs:not([hidden])");
    await openTab(page, "runs");
    const runId = `slow-${mode}-1`;
    control.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 9001, method: "agent", params: { message: "slow please", sessionKey: "ops:slow", agentId: "main", runId } }));
    // The run shows up among those in flight (runs.list, then live) and is followed from there.
    const row = page.locator(`#view-runs .runs-list li[data-run-id="${runId}"]`);
    await row.waitFor({ timeout: 10_000 });
    expect(await row.textContent()).toContain("ops:slow");
    await row.locator('button:has-text("Follow")').click();
    const output = page.locator("#view-runs .detail .message .body");
    await page.waitForFunction(() => (document.querySelector("#view-runs .detail .message .body")?.textContent ?? "").includes("w2"));
    await snap(page, `${mode}-runs`);
    await page.click('#view-runs .detail button:has-text("Abort")');
    await page.waitForSelector('#view-runs .run-status[data-state="aborted"]');
    expect(await control.next((f) => f.id === 9001, 10_000)).toMatchObject({ ok: false, error: { code: "ABORTED" } });
    expect((await output.textContent())?.startsWith("w0 w1 w2")).toBe(true);
    await row.waitFor({ state: "detached" });
    expect(problems).toEqual([]);
    await close();
  }, 60_000);

  it.runIf(mode === "distributed")("follows a run across a restart of its edge, with every word once", async () => {
    const { page, close } = await openApp(browser, gw.httpUrl());
    await page.waitForSelector("#tabs:not([hidden])");
    await openTab(page, "runs");
    const runId = "slow-across-restart";
    control.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 9002, method: "agent", params: { message: "slow across a restart", sessionKey: "ops:restart", agentId: "main", runId } }));
    await page.fill("#follow-run-id", runId);
    await page.press("#follow-run-id", "Enter");
    await page.waitForFunction(() => (document.querySelector("#view-runs .detail .message .body")?.textContent ?? "").includes("w1"));

    // The edge dies mid-run; the run goes on in the runner. A new edge takes the same port.
    const { port } = gw.edges[0]!;
    await gw.edges[0]!.proc.kill("SIGKILL");
    await page.waitForFunction(() => document.querySelector("#control-status")?.textContent?.includes("reconnecting") === true);
    replacement = spawnService("edge-0b", "services/edge/src/main.ts", ["--config", gw.configPath, "--port", String(port)], {
      E2E_GATEWAY_TOKEN: TOKEN,
      EDGE_ID: "e2e0b",
    });
    await waitHealthy(replacement, gw.httpUrl());

    // The view subscribes again after the last seq it saw and shows the whole answer.
    await page.waitForSelector('#view-runs .run-status[data-state="ok"]', { timeout: 30_000 });
    const whole = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    expect((await page.textContent("#view-runs .detail .message .body"))?.trim()).toBe(whole);
    await close();
  }, 90_000);
});
