import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { WsClient } from "./fixtures/ws-client.js";

/**
 * Bearer requests for `/v1/models`, one per token, written at once and pipelined on one socket:
 * the edge reads them in this order and starts checking each before the one before it is
 * answered. Resolves with the statuses, in order, once every answer is in.
 */
function pipelined(httpUrl: string, localAddress: string, tokens: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const statuses: number[] = [];
    let buffered = "";
    const socket = connect({ host: "127.0.0.1", port: Number(new URL(httpUrl).port), localAddress }, () => {
      socket.write(tokens.map((token) => `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`).join(""));
    });
    socket.setEncoding("utf8");
    socket.setTimeout(15_000, () => socket.destroy(new Error(`${statuses.length} of ${tokens.length} answers in`)));
    socket.on("data", (chunk: string) => {
      buffered += chunk;
      for (;;) {
        const headEnd = buffered.indexOf("\r\n\r\n");
        if (headEnd === -1) return;
        const head = buffered.slice(0, headEnd);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < headEnd + 4 + length) return;
        statuses.push(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0));
        buffered = buffered.slice(headEnd + 4 + length);
        if (statuses.length === tokens.length) {
          socket.destroy();
          resolve(statuses);
          return;
        }
      }
    });
    socket.once("error", reject);
    socket.once("close", () => reject(new Error(`closed after ${statuses.length} of ${tokens.length} answers`)));
  });
}

const WRONG_THEN_RIGHT = [...Array.from({ length: 100 }, (_, i) => `wrong-${i}`), TOKEN];

async function failConnects(url: string, localAddress: string, times: number): Promise<string[]> {
  const client = await WsClient.open(url, { localAddress });
  const codes: string[] = [];
  for (let i = 0; i < times; i++) codes.push((await client.connect(`wrong-${i}`)).error?.code ?? "ok");
  client.close();
  return codes;
}

describe.each(MODES)("failed-auth limiter (%s)", (mode) => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway(mode);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("answers the 21st failed attempt from one IP with RATE_LIMITED / 429 and Retry-After", async () => {
    const ip = "127.0.0.20";
    expect(await failConnects(gw.wsUrl(), ip, 20)).toEqual(Array(20).fill("UNAUTHORIZED"));

    const upgrade = await WsClient.open(gw.wsUrl(), { localAddress: ip }).catch((err: unknown) => err);
    expect(upgrade).toMatchObject({ status: 429 });
    const retryAfter = Number((upgrade as { headers: Record<string, string> }).headers["retry-after"]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(JSON.parse((upgrade as { body: string }).body)).toMatchObject({ error: { type: "rate_limited" } });

    // Even the right token is refused while blocked, over HTTP as well.
    const http = await httpRequest(`${gw.httpUrl()}/v1/models`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      localAddress: ip,
    });
    expect(http.status).toBe(429);
    expect(Number(http.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(http.body)).toEqual({ error: { message: expect.any(String), type: "rate_limited" } });

    // Another client IP is unaffected.
    const other = await WsClient.open(gw.wsUrl(), { localAddress: "127.0.0.21" });
    expect((await other.connect(TOKEN)).ok).toBe(true);
    other.close();

    // The block leaves one line in the log, naming the IP (log lines reach stdout in batches).
    const blocks = () =>
      gw
        .fullLogs()
        .split("\n")
        .filter((line) => line.includes("client IP blocked after too many failed authentications"))
        .map((line) => JSON.parse(line.slice(line.indexOf("{"))) as Record<string, unknown>)
        .filter((b) => b.clientIp === ip);
    await expect.poll(blocks, { timeout: 5_000 }).toHaveLength(1);
    expect(blocks()).toEqual([expect.objectContaining({ level: 40, failures: 20, blockedForSeconds: expect.any(Number) })]);
  });

  it("sends a RATE_LIMITED error frame to connect on an already open socket", async () => {
    const ip = "127.0.0.23";
    const client = await WsClient.open(gw.wsUrl(), { localAddress: ip });
    for (let i = 0; i < 20; i++) expect((await client.connect(`bad-${i}`)).error?.code).toBe("UNAUTHORIZED");
    const limited = await client.connect(TOKEN);
    expect(limited).toMatchObject({ ok: false, error: { code: "RATE_LIMITED" } });
    expect(limited.error?.details?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    client.close();
  });

  it("answers 20 of 100 wrong bearer tokens arriving together 401, and the right one after them 429", async () => {
    const ip = "127.0.0.25";
    const statuses = await pipelined(gw.httpUrl(), ip, WRONG_THEN_RIGHT);
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.slice(20)).toEqual(Array(81).fill(429));
    const again = await httpRequest(`${gw.httpUrl()}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` }, localAddress: ip });
    expect(again.status).toBe(429);
  });

  it("answers 20 of 40 connects with wrong tokens sent at once UNAUTHORIZED, the rest and then the right one RATE_LIMITED", async () => {
    const ip = "127.0.0.27";
    const clients = await Promise.all(Array.from({ length: 41 }, () => WsClient.open(gw.wsUrl(), { localAddress: ip })));
    const wrong = clients.slice(0, 40).map((client, i) => client.connect(`wrong-${i}`));
    const codes = (await Promise.all(wrong)).map((f) => f.error?.code ?? "ok");
    expect(codes.filter((c) => c === "UNAUTHORIZED")).toHaveLength(20);
    expect(codes.filter((c) => c !== "UNAUTHORIZED")).toEqual(Array(20).fill("RATE_LIMITED"));
    expect((await clients[40]!.connect(TOKEN)).error?.code).toBe("RATE_LIMITED");
    for (const client of clients) client.close();
  });

  it("counts HTTP bearer failures too", async () => {
    const ip = "127.0.0.24";
    for (let i = 0; i < 20; i++) {
      const res = await httpRequest(`${gw.httpUrl()}/v1/models`, {
        headers: { authorization: "Bearer nope" },
        localAddress: ip,
      });
      expect(res.status).toBe(401);
    }
    const res = await httpRequest(`${gw.httpUrl()}/v1/models`, {
      headers: { authorization: "Bearer nope" },
      localAddress: ip,
    });
    expect(res.status).toBe(429);
  });
});

describe("failed-auth limiter shared by two edges on one Redis", () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway("distributed", { edges: 2 });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("counts failures on one edge against the other", async () => {
    const ip = "127.0.0.22";
    expect(await failConnects(gw.wsUrl(0), ip, 10)).toEqual(Array(10).fill("UNAUTHORIZED"));
    expect(await failConnects(gw.wsUrl(1), ip, 10)).toEqual(Array(10).fill("UNAUTHORIZED"));
    const res = await httpRequest(`${gw.httpUrl(0)}/v1/models`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      localAddress: ip,
    });
    expect(res.status).toBe(429);
    const upgrade = await WsClient.open(gw.wsUrl(1), { localAddress: ip }).catch((err: unknown) => err);
    expect(upgrade).toMatchObject({ status: 429 });
  });

  it("shares one budget between the edges for guesses arriving together: at most 20 answered 401, the right one 429", async () => {
    const ip = "127.0.0.26";
    const half = [...WRONG_THEN_RIGHT.slice(0, 50), TOKEN];
    const [one, two] = await Promise.all([pipelined(gw.httpUrl(0), ip, half), pipelined(gw.httpUrl(1), ip, half)]);
    const statuses = [...one, ...two];
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(20);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect([one[50], two[50]]).toEqual([429, 429]);
    for (const edge of [0, 1]) {
      const again = await httpRequest(`${gw.httpUrl(edge)}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` }, localAddress: ip });
      expect(again.status).toBe(429);
    }
  });

  it("serves agents.list from either edge", async () => {
    for (const edge of [0, 1]) {
      const client = await WsClient.open(gw.wsUrl(edge));
      await client.connect(TOKEN);
      expect((await client.request("agents.list")).ok).toBe(true);
      client.close();
    }
  });
});
