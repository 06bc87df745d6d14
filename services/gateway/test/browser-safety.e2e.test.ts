import { connect as tcpConnect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { WsClient } from "./fixtures/ws-client.js";

const LISTED_ORIGIN = "http://localhost:5173";

/** One raw HTTP/1.1 exchange, for request lines no client library will send. */
function rawHttp(port: number, request: string, localAddress?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host: "127.0.0.1", port, localAddress });
    let answer = "";
    socket.setEncoding("utf8");
    socket.setTimeout(5_000, () => socket.destroy(new Error("no answer")));
    socket.on("data", (chunk: string) => {
      answer += chunk;
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.write(request);
  });
}

function statusOf(answer: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
}

function refusal(err: unknown): { status?: number; body?: string } {
  return err as { status?: number; body?: string };
}

describe.each(MODES)("browser safety at the edge (%s)", (mode) => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];
  const open = async (opts: Parameters<typeof WsClient.open>[1]) => {
    const client = await WsClient.open(gw.wsUrl(), opts);
    clients.push(client);
    return client;
  };
  const port = () => Number(new URL(gw.httpUrl()).port);

  beforeAll(async () => {
    gw = await startGateway(mode, { gateway: { allowedOrigins: [LISTED_ORIGIN] } });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("refuses a WS upgrade from a foreign or null origin before any frame", async () => {
    for (const origin of ["https://evil.example", "null"]) {
      const err = refusal(await open({ headers: { Origin: origin }, localAddress: "127.0.0.40" }).catch((e) => e));
      expect(err.status, origin).toBe(403);
      expect(JSON.parse(err.body ?? "{}")).toMatchObject({ error: { type: "authentication_error" } });
    }
  });

  it("lets the edge's own page and listed origins upgrade, but never as loopback", async () => {
    for (const origin of [`http://127.0.0.1:${port()}`, LISTED_ORIGIN]) {
      const page = await open({ headers: { Origin: origin }, localAddress: "127.0.0.41" });
      expect((await page.connect(undefined)).error?.code, origin).toBe("UNAUTHORIZED");
      expect((await page.connect(TOKEN)).payload, origin).toMatchObject({ auth: { method: "token" } });
    }
    // The same local client without Origin is still trusted as loopback (SPEC §5).
    const tool = await open({ localAddress: "127.0.0.41" });
    expect((await tool.connect(undefined)).payload).toMatchObject({ auth: { method: "loopback" } });
  });

  it("answers HTTP from a foreign origin with 403, and CORS for a listed one", async () => {
    const foreign = await httpRequest(`${gw.httpUrl()}/v1/models`, {
      headers: { origin: "https://evil.example", authorization: `Bearer ${TOKEN}` },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers["access-control-allow-origin"]).toBeUndefined();

    const preflight = await httpRequest(`${gw.httpUrl()}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: { origin: LISTED_ORIGIN, "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe(LISTED_ORIGIN);
    expect(String(preflight.headers["access-control-allow-headers"])).toContain("authorization");

    const listed = await httpRequest(`${gw.httpUrl()}/v1/models`, { headers: { origin: LISTED_ORIGIN } });
    expect(listed.status).toBe(401);
    const withToken = await httpRequest(`${gw.httpUrl()}/v1/models`, {
      headers: { origin: LISTED_ORIGIN, authorization: `Bearer ${TOKEN}` },
    });
    expect(withToken.status).toBe(200);
    expect(withToken.headers["access-control-allow-origin"]).toBe(LISTED_ORIGIN);
  });

  it("takes no Host trick for loopback, over WS and HTTP", async () => {
    for (const host of ["localhost:evil.com", "localhost:80@evil.com", "localhost.evil.com", "evil.com"]) {
      const ws = await open({ headers: { Host: host }, localAddress: "127.0.0.42" });
      expect((await ws.connect(undefined)).error?.code, host).toBe("UNAUTHORIZED");
      const http = await httpRequest(`${gw.httpUrl()}/v1/models`, { headers: { host }, localAddress: "127.0.0.43" });
      expect(http.status, host).toBe(401);
    }
    // The plain loopback names with a port still work.
    const http = await httpRequest(`${gw.httpUrl()}/v1/models`, { headers: { host: `localhost:${port()}` } });
    expect(http.status).toBe(200);
  });

  it("lets an absolute-form request line decide the host", async () => {
    const body = JSON.stringify({ tool: "time.now" });
    const send = (target: string) =>
      rawHttp(
        port(),
        `POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        "127.0.0.44",
      );
    expect(statusOf(await send("http://evil.com/api/tools/invoke"))).toBe(401);
    expect(statusOf(await send("/api/tools/invoke"))).toBe(200);
  });

  it("refuses JSON nested too deep with 400 / INVALID_REQUEST, not a crash", async () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const res = await httpRequest(`${gw.httpUrl()}/api/tools/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: `{"tool":"time.now","params":{"a":${deep}}}`,
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringMatching(/nested/) } });

    const ws = await open({ localAddress: "127.0.0.45" });
    await ws.connect(TOKEN);
    ws.sendRaw(`{"jsonrpc":"2.0","id":77,"method":"agents.list","params":{"a":${deep}}}`);
    expect(await ws.next((f) => f.id === 77)).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    expect((await ws.request("agents.list")).ok).toBe(true);
  });

  it("counts a loopback client's failures like anyone's, and then refuses even loopback trust", async () => {
    const ip = "127.0.0.46";
    const page = await open({ headers: { Origin: `http://127.0.0.1:${port()}` }, localAddress: ip });
    for (let i = 0; i < 20; i++) expect((await page.connect(undefined)).error?.code).toBe("UNAUTHORIZED");
    const blocked = refusal(await open({ localAddress: ip }).catch((e) => e));
    expect(blocked.status).toBe(429);
    const http = await httpRequest(`${gw.httpUrl()}/v1/models`, { localAddress: ip });
    expect(http.status).toBe(429);
  });
});
