import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, type GatewayUnderTest, MODES, PASSWORD, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

describe.each(MODES)("WebSocket protocol (%s)", (mode) => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];
  const open = async (opts?: Parameters<typeof WsClient.open>[1]) => {
    const client = await WsClient.open(gw.wsUrl(), opts);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    gw = await startGateway(mode);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("answers GET /health without credentials", async () => {
    const res = await fetch(`${gw.httpUrl()}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, status: "ok" });
  });

  it("connects with the token and echoes the request id", async () => {
    const client = await open();
    const res = await client.connect(TOKEN);
    expect(res).toMatchObject({
      id: 1,
      ok: true,
      payload: { role: "control", auth: { method: "token" }, protocol: 1 },
    });
    expect(res.payload?.methods).toEqual(
      expect.arrayContaining(["connect", "agents.list", "agent.identity.get"]),
    );
  });

  it("connects with the password, and without credentials from loopback", async () => {
    const byPassword = await open();
    expect(
      (await byPassword.request("connect", { role: "node", auth: { password: PASSWORD } })).payload,
    ).toMatchObject({
      role: "node",
      auth: { method: "password" },
    });
    const local = await open();
    expect((await local.request("connect", { role: "webchat" })).payload).toMatchObject({
      auth: { method: "loopback" },
    });
  });

  it("refuses credential-less loopback clients that came through a proxy", async () => {
    const proxied = await open({ headers: { "X-Forwarded-For": "203.0.113.5" }, localAddress: "127.0.0.9" });
    expect((await proxied.request("connect", { role: "control" })).error?.code).toBe("UNAUTHORIZED");
  });

  it("rejects a wrong token and keeps the socket usable", async () => {
    const client = await open({ localAddress: "127.0.0.10" });
    const res = await client.connect("not-the-token");
    expect(res).toMatchObject({ id: 1, ok: false, error: { code: "UNAUTHORIZED" } });
    expect((await client.connect(TOKEN)).ok).toBe(true);
  });

  it("answers a request before connect with NOT_CONNECTED and stays usable", async () => {
    const client = await open();
    const early = await client.request("agents.list");
    expect(early).toMatchObject({ id: 1, ok: false, error: { code: "NOT_CONNECTED" } });
    expect((await client.connect(TOKEN)).ok).toBe(true);
    expect((await client.request("agents.list")).ok).toBe(true);
  });

  it("lists the configured agents through the agent-runner", async () => {
    const client = await open();
    await client.connect(TOKEN);
    const res = await client.request("agents.list");
    expect(res.ok).toBe(true);
    expect(res.payload?.agents).toEqual(
      AGENTS.map(({ id, name, model, description }) => ({ id, name, model, description })),
    );
  });

  it("returns agent identities, the default agent when agentId is omitted", async () => {
    const client = await open();
    await client.connect(TOKEN);
    expect((await client.request("agent.identity.get")).payload).toEqual({
      id: "main",
      name: "Main",
      avatar: "https://example.org/main.png",
      description: "General assistant",
    });
    expect((await client.request("agent.identity.get", { agentId: "ops" })).payload).toMatchObject({
      id: "ops",
    });
    const unknown = await client.request("agent.identity.get", { agentId: "nobody" });
    expect(unknown).toMatchObject({
      ok: false,
      error: { code: "NOT_FOUND", message: "unknown agent: nobody" },
    });
  });

  it("answers malformed frames with clear errors", async () => {
    const client = await open();
    await client.connect(TOKEN);

    client.sendRaw("{not json");
    const invalid = await client.next((f) => f.ok === false);
    expect(invalid).toMatchObject({ id: null, error: { code: "INVALID_REQUEST" } });
    expect(invalid.error?.message).toMatch(/invalid JSON/);

    client.sendRaw(JSON.stringify({ jsonrpc: "2.0", method: "agents.list", params: {} }));
    expect(await client.next((f) => f.ok === false)).toMatchObject({
      id: null,
      error: { code: "INVALID_REQUEST", message: "request frame has no id" },
    });

    client.sendRaw(JSON.stringify({ jsonrpc: "1.0", id: 77, method: "agents.list", params: {} }));
    expect(await client.next((f) => f.id === 77)).toMatchObject({
      ok: false,
      error: { code: "INVALID_REQUEST" },
    });

    client.sendRaw(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect((await client.next((f) => f.ok === false)).error?.message).toMatch(/UTF-8/);

    const unknown = await client.request("no.such.method");
    expect(unknown).toMatchObject({ ok: false, error: { code: "METHOD_NOT_FOUND" } });

    const wrongType = await client.request("agent.identity.get", { agentId: 5 });
    expect(wrongType).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    expect(wrongType.error?.message).toMatch(/params\.agentId/);

    client.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 78, method: "agents.list", params: [] }));
    expect(await client.next((f) => f.id === 78)).toMatchObject({
      ok: false,
      error: { code: "INVALID_REQUEST" },
    });

    // Still usable after all of that.
    expect((await client.request("agents.list")).ok).toBe(true);
  });

  it("validates connect params", async () => {
    const client = await open();
    const res = await client.request("connect", { role: "admin", auth: { token: TOKEN } });
    expect(res).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    expect(res.error?.message).toMatch(/params\.role/);
    expect((await client.connect(TOKEN)).ok).toBe(true);
    expect((await client.connect(TOKEN)).error?.message).toBe("already connected");
  });

  it("closes a socket that sends a frame over the size limit", async () => {
    const client = await open();
    await client.connect(TOKEN);
    client.sendRaw(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "agents.list",
        params: { pad: "x".repeat(1_100_000) },
      }),
    );
    expect((await client.waitClosed()).code).toBe(1009);
  });

  it("rejects an HTTP body over the size limit with 413 and the SPEC body", async () => {
    const res = await fetch(`${gw.httpUrl()}/v1/models`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ pad: "x".repeat(1_100_000) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: { message: expect.stringContaining("larger than"), type: "invalid_request_error" },
    });
  });

  it("serves the agents as OpenAI models over authenticated HTTP", async () => {
    const ok = await fetch(`${gw.httpUrl()}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual([
      "main",
      "ops",
    ]);
    const denied = await fetch(`${gw.httpUrl()}/v1/models`, {
      headers: { authorization: "Bearer wrong", "x-forwarded-for": "1.2.3.4" },
    });
    expect(denied.status).toBe(401);
    expect(await denied.json()).toEqual({
      error: { message: expect.any(String), type: "authentication_error" },
    });
  });
});
