import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, PASSWORD, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { type Frame, WsClient } from "./fixtures/ws-client.js";

/**
 * SPEC §5 identities a proxy vouches for. Every client here is on loopback: 127.0.0.50 and
 * 127.0.0.52/31 play the proxies (gateway.trustedProxies), 127.0.0.51 an untrusted client that
 * sends the same headers, and the source address is what the edge judges by.
 */
const PROXY = "127.0.0.50";
const PROXY_IN_RANGE = "127.0.0.53";
const UNTRUSTED = "127.0.0.51";
const USER_HEADER = "x-auth-user";

describe("trusted proxy and overlay identities on two edges (distributed)", () => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];
  const connect = async (edge: number, from: string, headers: Record<string, string>, params: Record<string, unknown> = { role: "control" }): Promise<Frame> => {
    const client = await WsClient.open(gw.wsUrl(edge), { localAddress: from, headers });
    clients.push(client);
    return client.request("connect", params);
  };

  beforeAll(async () => {
    gw = await startGateway("distributed", {
      edges: 2,
      gateway: {
        auth: { token: "${E2E_GATEWAY_TOKEN}", password: PASSWORD, trustedProxy: { enabled: true, header: USER_HEADER } },
        overlay: { mode: "enabled" },
        trustedProxies: [PROXY, "127.0.0.52/31"],
      },
    });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("takes the user from a listed proxy address and from a listed range, on either edge", async () => {
    expect((await connect(0, PROXY, { [USER_HEADER]: "alice" }, { role: "webchat" })).payload).toMatchObject({
      auth: { method: "trusted-proxy" },
      session: { key: "webchat:alice" },
    });
    expect((await connect(1, PROXY_IN_RANGE, { [USER_HEADER]: "carol" })).payload).toMatchObject({ auth: { method: "trusted-proxy" } });
    const http = await httpRequest(`${gw.httpUrl(1)}/v1/models`, { headers: { [USER_HEADER]: "alice" }, localAddress: PROXY });
    expect(http.status).toBe(200);
  });

  it("takes the overlay identity from a listed proxy, before the proxy's user header (SPEC §5 order)", async () => {
    expect((await connect(1, PROXY, { "overlay-user-login": "bob@example.org" })).payload).toMatchObject({ auth: { method: "overlay" } });
    const both = await connect(0, PROXY, { "overlay-user-login": "bob@example.org", [USER_HEADER]: "alice" }, { role: "webchat" });
    expect(both.payload).toMatchObject({ auth: { method: "overlay" }, session: { key: "webchat:bob@example.org" } });
  });

  it("ignores identity and forwarding headers from an untrusted peer: no identity, no loopback", async () => {
    const spoofed = {
      [USER_HEADER]: "mallory",
      "overlay-user-login": "mallory",
      "x-forwarded-for": "127.0.0.1",
      "x-real-ip": "127.0.0.1",
      host: "localhost",
    };
    for (const edge of [0, 1]) {
      expect((await connect(edge, UNTRUSTED, spoofed)).error, `edge ${edge}`).toMatchObject({
        code: "UNAUTHORIZED",
        message: "authentication failed: missing credentials",
      });
    }
    const http = await httpRequest(`${gw.httpUrl(0)}/v1/models`, { headers: spoofed, localAddress: UNTRUSTED });
    expect(http.status).toBe(401);
    // The same peer with nothing forwarded is a plain local client (SPEC §5 loopback).
    expect((await connect(0, UNTRUSTED, {})).payload).toMatchObject({ auth: { method: "loopback" } });
  });

  it("counts an untrusted peer's failures under its own address, whatever it claims to forward", async () => {
    const ip = "127.0.0.54";
    const client = await WsClient.open(gw.wsUrl(0), { localAddress: ip, headers: { "x-forwarded-for": "198.51.100.1" } });
    clients.push(client);
    for (let i = 0; i < 20; i++) expect((await client.connect(`wrong-${i}`)).error?.code).toBe("UNAUTHORIZED");
    const next = await WsClient.open(gw.wsUrl(1), { localAddress: ip, headers: { "x-forwarded-for": "198.51.100.2" } }).catch((e: unknown) => e);
    expect(next).toMatchObject({ status: 429 });
  });

  it("never treats a proxy's own requests as loopback, and counts its clients by their forwarded address", async () => {
    expect((await connect(0, PROXY, { host: "localhost" })).error).toMatchObject({ code: "UNAUTHORIZED" });
    expect((await connect(1, PROXY, { host: "localhost", "x-forwarded-for": "203.0.113.7" })).error).toMatchObject({ code: "UNAUTHORIZED" });

    const behind = await WsClient.open(gw.wsUrl(0), { localAddress: PROXY, headers: { "x-forwarded-for": "203.0.113.8" } });
    clients.push(behind);
    for (let i = 0; i < 20; i++) expect((await behind.connect(`wrong-${i}`)).error?.code).toBe("UNAUTHORIZED");
    const blocked = await WsClient.open(gw.wsUrl(1), { localAddress: PROXY, headers: { "x-forwarded-for": "203.0.113.8" } }).catch((e: unknown) => e);
    expect(blocked).toMatchObject({ status: 429 });
    // The proxy's other clients, and the proxy itself, are not blocked.
    expect((await connect(1, PROXY, { "x-forwarded-for": "203.0.113.9" }, { role: "control", auth: { token: TOKEN } })).ok).toBe(true);
    expect((await connect(0, PROXY, { [USER_HEADER]: "alice" })).ok).toBe(true);
  });
});

describe("overlay identity required (distributed, two edges)", () => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];
  const connect = async (edge: number, from: string, headers: Record<string, string>, params: Record<string, unknown>): Promise<Frame> => {
    const client = await WsClient.open(gw.wsUrl(edge), { localAddress: from, headers });
    clients.push(client);
    return client.request("connect", params);
  };

  beforeAll(async () => {
    gw = await startGateway("distributed", {
      edges: 2,
      gateway: {
        auth: { token: "${E2E_GATEWAY_TOKEN}", password: PASSWORD, trustedProxy: { enabled: true, header: USER_HEADER } },
        overlay: { mode: "require" },
        trustedProxies: [PROXY],
      },
    });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("refuses every other method on both edges: token, password, loopback, pairing, the proxy's user header, an untrusted overlay header", async () => {
    for (const edge of [0, 1]) {
      const refusals: Array<[string, Promise<Frame>]> = [
        ["token", connect(edge, "127.0.0.60", {}, { role: "control", auth: { token: TOKEN } })],
        ["password", connect(edge, "127.0.0.60", {}, { role: "control", auth: { password: PASSWORD } })],
        ["loopback", connect(edge, "127.0.0.60", {}, { role: "control" })],
        ["pairing", connect(edge, "127.0.0.60", {}, { role: "node", pairing: true })],
        ["trusted proxy", connect(edge, PROXY, { [USER_HEADER]: "alice" }, { role: "control" })],
        ["untrusted overlay", connect(edge, "127.0.0.61", { "overlay-user-login": "mallory" }, { role: "control" })],
      ];
      for (const [what, answer] of refusals) {
        expect((await answer).error, `${what} on edge ${edge}`).toMatchObject({
          code: "UNAUTHORIZED",
          message: "authentication failed: an overlay-network identity is required",
        });
      }
      const http = await httpRequest(`${gw.httpUrl(edge)}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` }, localAddress: "127.0.0.62" });
      expect(http.status).toBe(401);
    }
  });

  it("lets the overlay identity in through the listed proxy, over WS and HTTP", async () => {
    for (const edge of [0, 1]) {
      const answer = await connect(edge, PROXY, { "overlay-user-login": "ops@example.org" }, { role: "control" });
      expect(answer.payload, `edge ${edge}`).toMatchObject({ auth: { method: "overlay" } });
      const http = await httpRequest(`${gw.httpUrl(edge)}/v1/models`, { headers: { "overlay-user-login": "ops@example.org" }, localAddress: PROXY });
      expect(http.status).toBe(200);
    }
  });
});

describe("a trusted proxy on IPv6", () => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    gw = await startGateway("embedded", {
      gateway: {
        bind: "::1",
        auth: { token: "${E2E_GATEWAY_TOKEN}", trustedProxy: { enabled: true, header: USER_HEADER } },
        trustedProxies: ["::1/128"],
      },
    });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("matches an IPv6 peer against a CIDR range, and counts its clients by their forwarded IPv6 address", async () => {
    expect(gw.wsUrl()).toMatch(/^ws:\/\/\[::1\]:/);
    const viaProxy = await WsClient.open(gw.wsUrl(), { headers: { [USER_HEADER]: "dana" } });
    clients.push(viaProxy);
    expect((await viaProxy.connect(undefined)).payload).toMatchObject({ auth: { method: "trusted-proxy" } });

    const behind = await WsClient.open(gw.wsUrl(), { headers: { "x-forwarded-for": "2001:db8::5" } });
    clients.push(behind);
    for (let i = 0; i < 20; i++) expect((await behind.connect(`wrong-${i}`)).error?.code).toBe("UNAUTHORIZED");
    const blocked = await WsClient.open(gw.wsUrl(), { headers: { "x-forwarded-for": "2001:db8::5" } }).catch((e: unknown) => e);
    expect(blocked).toMatchObject({ status: 429 });
    const other = await WsClient.open(gw.wsUrl(), { headers: { "x-forwarded-for": "2001:db8::6" } });
    clients.push(other);
    expect((await other.connect(TOKEN)).ok).toBe(true);
  });
});
