import { connect as tcpConnect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { type Frame, WsClient } from "./fixtures/ws-client.js";

// Small limits so each one is reached quickly; docs/decisions.md "Abuse limits" has the defaults.
const LIMITS = {
  maxConnectionsPerIp: 3,
  maxInFlightPerConnection: 4,
  maxSubscriptionsPerConnection: 2,
  maxSendBufferBytes: 65_536,
  preConnectTimeoutMs: 800,
  httpRequestTimeoutMs: 1_000,
};

interface RawSocket {
  socket: Socket;
  received(): string;
  /** Everything the server sent, once it has closed the socket (bounded). */
  ended: Promise<string>;
}

function rawSocket(port: number): Promise<RawSocket> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host: "127.0.0.1", port }, () => {
      let received = "";
      socket.on("data", (chunk) => {
        received += chunk.toString("latin1");
      });
      const ended = new Promise<string>((done, fail) => {
        const timer = setTimeout(() => fail(new Error("server kept the socket open")), 10_000);
        socket.on("close", () => {
          clearTimeout(timer);
          done(received);
        });
      });
      resolve({ socket, received: () => received, ended });
    });
    socket.on("error", reject);
  });
}

/** Waits until `fn` stops throwing (bounded). */
async function eventually<T>(fn: () => Promise<T>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe.each(MODES)("abuse limits (%s)", (mode) => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];
  const open = async (localAddress: string) => {
    const client = await WsClient.open(gw.wsUrl(), { localAddress });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    gw = await startGateway(mode, { gateway: { limits: LIMITS } });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  it("refuses a client IP's connection past maxConnectionsPerIp with 429, and frees the slot on close", async () => {
    const ip = "127.0.0.41";
    const held = [await open(ip), await open(ip), await open(ip)];
    const refused = await WsClient.open(gw.wsUrl(), { localAddress: ip }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ status: 429 });
    expect(JSON.parse((refused as { body: string }).body)).toEqual({
      error: { message: "too many connections from this address (max 3)", type: "rate_limited" },
    });
    // Other addresses are not affected.
    expect((await (await open("127.0.0.42")).connect(TOKEN)).ok).toBe(true);

    held[0]!.close();
    await held[0]!.waitClosed();
    const again = await eventually(() => open(ip));
    expect((await again.connect(TOKEN)).ok).toBe(true);
  });

  it("answers requests past maxInFlightPerConnection at once with RATE_LIMITED, exactly once per id", async () => {
    const client = await open("127.0.0.43");
    await client.connect(TOKEN);
    const ids = Array.from({ length: 200 }, (_, i) => 1_000 + i);
    // One burst, so the edge reads many frames before any answer can come back.
    for (const id of ids) client.sendRaw(JSON.stringify({ jsonrpc: "2.0", id, method: "agents.list" }));
    const answers: Frame[] = [];
    for (const id of ids) answers.push(await client.next((f) => f.id === id, 10_000));
    const limited = answers.filter((f) => f.error?.code === "RATE_LIMITED");
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.error).toEqual({
      code: "RATE_LIMITED",
      message: "too many requests in flight on this connection (max 4)",
      details: { limit: "maxInFlightPerConnection", max: 4 },
    });
    expect(answers.every((f) => f.ok === true || f.error?.code === "RATE_LIMITED")).toBe(true);
    // No duplicate answers arrive later.
    await expect(client.next((f) => typeof f.id === "number" && f.id >= 1_000, 300)).rejects.toThrow();
    expect((await client.request("agents.list")).ok).toBe(true);
  });

  it("refuses an agent.subscribe past maxSubscriptionsPerConnection by name, and makes room on unsubscribe", async () => {
    const client = await open("127.0.0.44");
    await client.connect(TOKEN);
    for (const sessionKey of ["a:1", "a:2"]) expect((await client.request("agent.subscribe", { sessionKey })).ok).toBe(true);
    const refused = await client.request("agent.subscribe", { sessionKey: "a:3" });
    expect(refused.error).toEqual({
      code: "RATE_LIMITED",
      message: "too many subscriptions on this connection (max 2): agent.unsubscribe first",
      details: { limit: "maxSubscriptionsPerConnection", max: 2 },
    });
    expect((await client.request("agent.unsubscribe", { sessionKey: "a:1" })).payload).toEqual({ unsubscribed: true, sessionKey: "a:1" });
    expect((await client.request("agent.subscribe", { sessionKey: "a:3" })).ok).toBe(true);
  });

  it("drops a client that does not read before its send queue passes maxSendBufferBytes", async () => {
    const client = await open("127.0.0.44");
    await client.connect(TOKEN);
    client.socket.pause();
    // About 17 MB of answers: more than the kernel buffers of both ends take, so the edge's
    // own queue grows until the limit cuts the client off.
    const frame = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "agents.list" });
    for (let id = 1; id <= 100_000; id++) client.sendRaw(frame(id));
    await eventually(async () => {
      if (!gw.logs().includes("slow consumer disconnected")) throw new Error("not yet");
    }, 20_000);
    client.socket.resume();
    expect((await client.waitClosed(10_000)).code).toBe(1006);

    const healthy = await open("127.0.0.45");
    expect((await healthy.connect(TOKEN)).ok).toBe(true);
    expect((await healthy.request("agents.list")).ok).toBe(true);
  });

  it("closes a socket that does not connect within preConnectTimeoutMs with 4008, not one that did", async () => {
    const idle = await open("127.0.0.46");
    const ready = await open("127.0.0.46");
    await ready.connect(TOKEN);
    expect(await idle.waitClosed(5_000)).toEqual({ code: 4008, reason: "connect timeout" });
    // Past httpRequestTimeoutMs too: that limit is for HTTP requests, not upgraded sockets.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(ready.closed).toBeUndefined();
    expect((await ready.request("agents.list")).ok).toBe(true);
  });

  it("cuts off an HTTP request whose body never finishes (slowloris)", async () => {
    const { socket, ended } = await rawSocket(gw.edges[0]!.port);
    socket.write(
      `POST /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"pad\":",
    );
    expect(await ended).toMatch(/^HTTP\/1\.1 408/);
  });

  it("cuts off HTTP headers that never finish", async () => {
    const { socket, ended } = await rawSocket(gw.edges[0]!.port);
    socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    expect(await ended).toMatch(/^HTTP\/1\.1 408/);
  });

  it("survives clients that reset the connection in the middle of the upgrade", async () => {
    const upgrade =
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        Array.from({ length: 30 }, async () => {
          const raw = await rawSocket(gw.edges[0]!.port);
          raw.socket.write(upgrade);
          // An RST while the edge is still deciding whether to upgrade (failed-auth lookup).
          setImmediate(() => raw.socket.resetAndDestroy());
          await raw.ended.catch(() => undefined);
        }),
      );
    }
    for (const edge of gw.edges) expect(edge.proc.child.exitCode).toBeNull();
    expect((await fetch(`${gw.httpUrl()}/health`)).status).toBe(200);
    const client = await open("127.0.0.47");
    expect((await client.connect(TOKEN)).ok).toBe(true);
  });

  it("closes a half-sent WebSocket frame before connect with the pre-connect timeout", async () => {
    const raw = await rawSocket(gw.edges[0]!.port);
    const { socket } = raw;
    socket.write(
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    // A masked text frame announcing 100 bytes, of which only 4 arrive.
    socket.write(Buffer.from([0x81, 0x80 | 100, 1, 2, 3, 4, 0x7b, 0x22, 0x61, 0x22]));
    // The edge sends a close frame (0x88) with code 4008 (0x0fa8); ws would then wait for the
    // client's answer, so the test hangs up itself.
    await eventually(async () => {
      if (!raw.received().includes("\x88\x11\x0f\xa8")) throw new Error("no close frame yet");
    }, 5_000);
    expect(raw.received()).toMatch(/^HTTP\/1\.1 101/);
    raw.socket.destroy();
  });
});
