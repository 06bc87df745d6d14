import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { WsClient } from "./fixtures/ws-client.js";

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

  it("serves agents.list from either edge", async () => {
    for (const edge of [0, 1]) {
      const client = await WsClient.open(gw.wsUrl(edge));
      await client.connect(TOKEN);
      expect((await client.request("agents.list")).ok).toBe(true);
      client.close();
    }
  });
});
