import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, type Mode, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { httpRequest } from "./fixtures/http.js";
import { type Frame, WsClient } from "./fixtures/ws-client.js";

/**
 * The roles a proxy's or overlay network's user may take (gateway.auth.trustedProxy.roles,
 * gateway.overlay.roles and their controlUsers). As in proxy-identity.e2e.test.ts, 127.0.0.50 plays
 * the proxy (gateway.trustedProxies) and the source address is what the edge judges by.
 */
const PROXY = "127.0.0.50";
const USER_HEADER = "x-auth-user";
const SEND_BODY = JSON.stringify({ params: { to: "@ops", message: "hi", channel: "telegram", idempotencyKey: "k-1" } });

function useGateway(mode: Mode, gateway: Record<string, unknown>) {
  const state: { gw?: GatewayUnderTest } = {};
  const clients: WsClient[] = [];
  beforeAll(async () => {
    state.gw = await startGateway(mode, { gateway });
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await state.gw?.stop();
  });
  const open = async (headers: Record<string, string>): Promise<WsClient> => {
    const client = await WsClient.open(state.gw!.wsUrl(), { localAddress: PROXY, headers });
    clients.push(client);
    return client;
  };
  const connect = async (headers: Record<string, string>, params: Record<string, unknown>): Promise<Frame> =>
    (await open(headers)).request("connect", params);
  const http = (path: string, headers: Record<string, string>, body?: string) =>
    httpRequest(`${state.gw!.httpUrl()}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body,
      localAddress: PROXY,
    });
  return { open, connect, http };
}

describe.each(MODES)("identity users confined to webchat (gateway.auth.trustedProxy.roles: [webchat]) (%s)", (mode) => {
  const { open, connect, http } = useGateway(mode, {
    auth: {
      token: "${E2E_GATEWAY_TOKEN}",
      trustedProxy: { enabled: true, header: USER_HEADER, roles: ["webchat"], controlUsers: ["ops"] },
    },
    overlay: { mode: "enabled", roles: ["webchat", "node"] },
    trustedProxies: [PROXY],
  });
  const alice = { [USER_HEADER]: "alice" };

  it("refuses role control and node with FORBIDDEN, never counted as a failed attempt", async () => {
    const client = await open(alice);
    // More refusals than the failed-auth limit (20 a minute): none of them counts.
    for (let i = 0; i < 22; i++) {
      expect((await client.request("connect", { role: "control" })).error).toEqual({
        code: "FORBIDDEN",
        message:
          "role control is not allowed for a user authenticated by trusted-proxy (gateway.auth.trustedProxy.roles or gateway.auth.trustedProxy.controlUsers)",
      });
    }
    expect((await client.request("connect", { role: "node" })).error).toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringContaining("role node is not allowed"),
    });
    // The socket stays open, and the same user may still chat on its own sessions.
    const webchat = await client.request("connect", { role: "webchat" });
    expect(webchat.payload).toMatchObject({ role: "webchat", auth: { method: "trusted-proxy" }, session: { key: "webchat:alice" } });
    expect((await client.request("sessions.list", {})).error?.code).toBe("FORBIDDEN");
    expect((await client.request("sessions.preview", { key: "webchat:bob" })).error?.code).toBe("FORBIDDEN");
  });

  it("answers 403 with the HTTP error body on the operator routes", async () => {
    for (const [path, body] of [["/v1/models", undefined], ["/api/send", SEND_BODY], ["/api/tools/invoke", JSON.stringify({ tool: "time.now" })]] as const) {
      const res = await http(path, alice, body);
      expect(res.status, path).toBe(403);
      expect(JSON.parse(res.body), path).toEqual({
        error: { type: "authentication_error", message: expect.stringContaining("this endpoint needs role control") },
      });
    }
    const chat = await http("/v1/chat/completions", alice, JSON.stringify({ model: "main", user: "bob", messages: [{ role: "user", content: "hi" }] }));
    expect(chat.status).toBe(403);
  });

  it("lets a controlUsers user take control and use the HTTP routes", async () => {
    const ops = { [USER_HEADER]: "ops" };
    expect((await connect(ops, { role: "control" })).payload).toMatchObject({ role: "control", auth: { method: "trusted-proxy" } });
    expect((await http("/v1/models", ops)).status).toBe(200);
    const tool = await http("/api/tools/invoke", ops, JSON.stringify({ tool: "time.now" }));
    expect(tool.status).toBe(200);
    // controlUsers opens control only: node stays out of this user's reach too.
    expect((await connect(ops, { role: "node" })).error?.code).toBe("FORBIDDEN");
  });

  it("applies the overlay's own list to overlay users", async () => {
    const bob = { "overlay-user-login": "bob@example.org" };
    expect((await connect(bob, { role: "control" })).error).toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringContaining("authenticated by overlay (gateway.overlay.roles or gateway.overlay.controlUsers)"),
    });
    expect((await connect(bob, { role: "node" })).payload).toMatchObject({ role: "node", auth: { method: "overlay" } });
    expect((await http("/v1/models", bob)).status).toBe(403);
  });

  it("leaves the token alone, from the same proxy", async () => {
    expect((await connect(alice, { role: "control", auth: { token: TOKEN } })).payload).toMatchObject({ auth: { method: "token" } });
    expect((await http("/v1/models", { ...alice, authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });
});

describe.each(MODES)("identity users with the default roles (%s)", (mode) => {
  const { connect, http } = useGateway(mode, {
    auth: { token: "${E2E_GATEWAY_TOKEN}", trustedProxy: { enabled: true, header: USER_HEADER } },
    trustedProxies: [PROXY],
  });

  it("still lets a proxied user take control and use the HTTP routes", async () => {
    const carol = { [USER_HEADER]: "carol" };
    expect((await connect(carol, { role: "control" })).payload).toMatchObject({ role: "control", auth: { method: "trusted-proxy" } });
    expect((await http("/v1/models", carol)).status).toBe(200);
  });
});
