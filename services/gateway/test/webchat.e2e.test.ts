import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "./fixtures/browser.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { type ServiceProcess, spawnService, waitHealthy } from "./fixtures/processes.js";
import { composerReady, say, watchPage } from "./fixtures/webapp.js";
import { WsClient } from "./fixtures/ws-client.js";

const USER_HEADER = "x-forwarded-user";

/** The little of the browser's DOM the page functions below use (this file is compiled for Node). */
declare const document: {
  querySelector(selector: string): { textContent: string | null } | null;
  querySelectorAll(selector: string): { length: number };
};

/** The finished assistant messages' texts, oldest first. */
const answers = (page: Page) =>
  page.$$eval(".message.assistant:not(.pending) .body", (nodes) => nodes.map((node) => node.textContent ?? ""));
const userMessages = (page: Page) => page.$$eval(".message.user .body", (nodes) => nodes.map((node) => node.textContent ?? ""));

/** A fresh browser profile on the chat page, handed the token in the URL, once it takes a message. */
async function openChat(browser: TestBrowser, url: string) {
  const context = await browser.context();
  const page = await context.newPage();
  const problems = await watchPage(page);
  await page.goto(`${url}/chat#token=${TOKEN}`);
  await composerReady(page);
  return { context, page, problems };
}

describe.each(MODES)("web chat (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let model: FakeModelServer;
  let browser: TestBrowser;

  beforeAll(async () => {
    [model, browser] = await Promise.all([startFakeModelServer(), launchBrowser()]);
    gw = await startGateway(mode, {
      agents: [
        { id: "main", name: "Main", model: "fake/model", description: "answers through the fake model" },
        { id: "echo", name: "Echo", model: "builtin/echo", description: "says it back" },
      ],
      models: { providers: { fake: { kind: "openai", baseUrl: model.baseUrl, apiKey: "sk-fake", timeoutMs: 15_000 } } },
      // The browser plays both a person behind an identity proxy (the header below) and, without
      // it, someone with the token: the proxy is the browser's own address.
      gateway: {
        auth: { token: "${E2E_GATEWAY_TOKEN}", trustedProxy: { enabled: true, header: USER_HEADER } },
        trustedProxies: ["127.0.0.1"],
      },
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await model?.close();
  });

  it("serves the page with its safety headers, revalidates it, and sends a browser at / there", async () => {
    const root = await httpRequest(`${gw.httpUrl()}/`);
    expect(root.status).toBe(302);
    expect(new URL(String(root.headers.location), `${gw.httpUrl()}/`).pathname).toBe("/chat");

    const page = await httpRequest(`${gw.httpUrl()}/chat`);
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.headers["x-frame-options"]).toBe("DENY");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    expect(page.body).toContain('src="chat/app.js"');
    const again = await httpRequest(`${gw.httpUrl()}/chat`, { headers: { "if-none-match": String(page.headers.etag) } });
    expect(again.status).toBe(304);

    const script = await httpRequest(`${gw.httpUrl()}/chat/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    const missing = await httpRequest(`${gw.httpUrl()}/chat/other.js`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ error: { type: "invalid_request_error" } });
    // Another site's page may not load the script either (DESIGN §10).
    const foreign = await httpRequest(`${gw.httpUrl()}/chat/app.js`, { headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
  });

  it("chats in a browser: the answer streams in, history survives a reload, threads stay apart", async () => {
    const { context, page, problems } = await openChat(browser, gw.httpUrl());
    // The token left the URL (and the history) as soon as the page read it.
    expect(new URL(page.url()).hash).toBe("");
    expect(await page.textContent("#status")).toContain("connected (token)");

    await say(page, "hello from the browser");
    expect(await answers(page)).toEqual(["You said: hello from the browser"]);

    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll(".message").length === 2);
    expect(await userMessages(page)).toEqual(["hello from the browser"]);
    expect(await answers(page)).toEqual(["You said: hello from the browser"]);

    await page.click("#new-thread");
    await page.waitForFunction(() => document.querySelectorAll(".message").length === 0);
    await page.selectOption("#agent", "echo");
    await say(page, "second thread");
    expect(await answers(page)).toEqual(["second thread"]);
    expect(await page.$$eval("#threads button", (b) => b.map((x) => x.textContent))).toEqual(["Main", "second thread"]);

    await page.click('#threads button[data-key="webchat:operator"]');
    await page.waitForFunction(() => document.querySelector(".message.user .body")?.textContent === "hello from the browser");
    expect(await answers(page)).toEqual(["You said: hello from the browser"]);

    // What the page showed is what the gateway stored, under the connection's own keys.
    const control = await WsClient.open(gw.wsUrl());
    try {
      await control.connect(TOKEN);
      const main = await control.request("sessions.preview", { key: "webchat:operator" });
      expect((main.payload?.messages as Array<{ body: string }>).map((m) => m.body)).toEqual([
        "You said: hello from the browser",
        "hello from the browser",
      ]);
      const listed = await control.request("sessions.list", {});
      const keys = (listed.payload?.sessions as Array<{ key: string; agentId: string }>).filter((s) => s.key.startsWith("webchat:"));
      expect(keys.map((s) => s.agentId).sort()).toEqual(["echo", "main"]);
    } finally {
      control.close();
    }
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it("stops an answer that is still being written", async () => {
    const { context, page, problems } = await openChat(browser, gw.httpUrl());
    await page.click("#new-thread");
    await page.fill("#input", "slow please");
    await page.keyboard.press("Enter");
    // Some of the answer has arrived, and the run is still going.
    await page.waitForFunction(() => (document.querySelector(".message.assistant.pending .body")?.textContent ?? "").length > 0);
    expect(await page.isDisabled("#send")).toBe(true);
    await page.click("#stop");
    await page.waitForSelector(".message.assistant:not(.pending) .tool");
    expect(await page.textContent(".message.assistant .tool")).toBe("Stopped.");
    expect(await page.isDisabled("#send")).toBe(false);
    expect(await page.isHidden("#stop")).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it("connects as the person an identity proxy names, with no secret, on that person's own session", async () => {
    const context = await browser.context({ extraHTTPHeaders: { [USER_HEADER]: "alice" } });
    const page = await context.newPage();
    const problems = await watchPage(page);
    await page.goto(`${gw.httpUrl()}/chat`);
    await composerReady(page);
    expect(await page.textContent("#status")).toContain("connected (trusted-proxy)");
    await say(page, "I am alice");
    expect(await answers(page)).toEqual(["You said: I am alice"]);
    expect(await page.$$eval("#threads button", (b) => b.map((x) => x.dataset.key))).toEqual(["webchat:alice"]);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it("asks for the secret, says when it is wrong, and connects with the right one", async () => {
    const context = await browser.context();
    const page = await context.newPage();
    await page.goto(`${gw.httpUrl()}/chat`);
    // A page is never trusted as loopback: without a secret the gateway refuses it.
    await page.waitForSelector("#login:not([hidden])");
    expect(await page.textContent("#login-error")).toBe("");
    await page.fill("#secret", "not-the-token");
    await page.click("#login button");
    await page.waitForFunction(() => (document.querySelector("#login-error")?.textContent ?? "") !== "");
    expect(await page.isHidden("#chat")).toBe(true);
    // A reload asks again rather than spending another failed attempt without a secret.
    await page.reload();
    await page.waitForSelector("#login:not([hidden])");
    await page.fill("#secret", TOKEN);
    await page.click("#login button");
    await page.waitForSelector("#chat:not([hidden])");
    expect(await page.textContent("#status")).toContain("connected (token)");
    await context.close();
  }, 60_000);
});

describe("web chat across an edge restart (distributed)", () => {
  let gw: GatewayUnderTest;
  let model: FakeModelServer;
  let browser: TestBrowser;
  let replacement: ServiceProcess | undefined;

  beforeAll(async () => {
    [model, browser] = await Promise.all([startFakeModelServer(), launchBrowser()]);
    gw = await startGateway("distributed", {
      agents: [{ id: "main", name: "Main", model: "fake/model", description: "answers through the fake model" }],
      models: { providers: { fake: { kind: "openai", baseUrl: model.baseUrl, apiKey: "sk-fake", timeoutMs: 15_000 } } },
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await replacement?.stop();
    await gw?.stop();
    await model?.close();
  });

  it("reconnects by itself and shows the answer of the run that was streaming when its edge died", async () => {
    const { context, page } = await openChat(browser, gw.httpUrl());
    await page.fill("#input", "slow answer across a restart");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => (document.querySelector(".message.assistant.pending .body")?.textContent ?? "").length > 0);

    // The edge dies mid-answer; the run goes on in the runner. A new edge takes the same port.
    const { port } = gw.edges[0]!;
    await gw.edges[0]!.proc.kill("SIGKILL");
    await page.waitForFunction(() => document.querySelector("#status")?.textContent?.startsWith("reconnecting") === true);
    replacement = spawnService("edge-0b", "services/edge/src/main.ts", ["--config", gw.configPath, "--port", String(port)], {
      E2E_GATEWAY_TOKEN: TOKEN,
      EDGE_ID: "e2e0b",
    });
    await waitHealthy(replacement, gw.httpUrl());

    // The page asks how the run ended (agent.wait on its runId) and shows the whole answer, once:
    // the run may have ended before the page was back, with its answer in the history it loads.
    const ended = () => document.querySelector(".message.assistant") !== null && document.querySelector(".message.pending") === null;
    await page.waitForFunction(ended, undefined, { timeout: 30_000 });
    // The fake model's slow answer: 40 words, 100 ms apart.
    const whole = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    expect((await answers(page)).map((text) => text.trim())).toEqual([whole]);
    expect(await page.textContent("#status")).toContain("connected (token)");
    expect(await page.isDisabled("#send")).toBe(false);
    await context.close();
  }, 90_000);
});
