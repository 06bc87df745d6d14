import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { GatewayClient, GatewayRpcError, type SocketLike } from "./gateway-client.js";
import { payloadText } from "./protocol.js";

type Frame = { id: number; method: string; params: Record<string, unknown> };

/** A server that hands each request to `answer`, which may reply later and in any order. */
async function fakeGateway(answer: (frame: Frame, socket: WebSocket) => void) {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  server.on("connection", (socket) => socket.on("message", (data) => answer(JSON.parse(String(data)) as Frame, socket)));
  return { server, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

// ws types its listeners per event; at run time it is the standard interface the client needs.
const factory = (url: string) => new WebSocket(url) as unknown as SocketLike;
const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function clientOf(answer: (frame: Frame, socket: WebSocket) => void) {
  const { server, url } = await fakeGateway(answer);
  servers.push(server);
  return GatewayClient.open(url, factory);
}

describe("GatewayClient", () => {
  it("matches answers to requests by id, in whatever order they come", async () => {
    const held: Array<{ frame: Frame; socket: WebSocket }> = [];
    const client = await clientOf((frame, socket) => {
      held.push({ frame, socket });
      if (held.length < 2) return;
      for (const { frame: f, socket: s } of held.reverse()) s.send(JSON.stringify({ id: f.id, ok: true, payload: { echoed: f.params } }));
    });
    const [first, second] = await Promise.all([client.request("agents.list", { n: 1 }), client.request("models.status", { n: 2 })]);
    expect(first).toEqual({ echoed: { n: 1 } });
    expect(second).toEqual({ echoed: { n: 2 } });
    client.close();
  });

  it("turns an error answer into a GatewayRpcError with its code, message and details", async () => {
    const client = await clientOf((frame, socket) =>
      socket.send(JSON.stringify({ id: frame.id, ok: false, error: { code: "FORBIDDEN", message: "not yours", details: { runId: "r1" } } })),
    );
    const err = await client.request("chat.abort", { runId: "r1" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayRpcError);
    expect(err).toMatchObject({ code: "FORBIDDEN", message: "not yours", details: { runId: "r1" } });
    client.close();
  });

  it("passes events to listeners until they unsubscribe, and ignores frames that are not JSON", async () => {
    const client = await clientOf((frame, socket) => {
      socket.send("not json");
      socket.send(JSON.stringify({ event: "agent", payload: { runId: "r1", stream: "assistant", data: { text: "hi" } } }));
      socket.send(JSON.stringify({ id: frame.id, ok: true, payload: {} }));
    });
    const seen: Array<[string, unknown]> = [];
    const stop = client.onEvent((event, payload) => seen.push([event, payload]));
    await client.request("agent");
    expect(seen).toEqual([["agent", { runId: "r1", stream: "assistant", data: { text: "hi" } }]]);
    stop();
    await client.request("agent");
    expect(seen).toHaveLength(1);
    client.close();
  });

  it("fails every unanswered request when the connection closes, and says so once", async () => {
    const client = await clientOf((_frame, socket) => socket.close(4001, "going away"));
    const closes: Array<[number, string]> = [];
    client.onClose((code, reason) => closes.push([code, reason]));
    const err = await client.request("agent", {}, { timeoutMs: 0 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "UNAVAILABLE" });
    expect((err as Error).message).toContain("4001: going away");
    expect(closes).toEqual([[4001, "going away"]]);
    expect(client.isOpen).toBe(false);
    await expect(client.request("agents.list")).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });

  it("gives up on an answer after its timeout", async () => {
    const client = await clientOf(() => undefined);
    await expect(client.request("agent.wait", {}, { timeoutMs: 50 })).rejects.toMatchObject({ code: "TIMEOUT" });
    client.close();
  });

  it("rejects open when nothing listens", async () => {
    const { server, url } = await fakeGateway(() => undefined);
    await new Promise((resolve) => server.close(resolve));
    await expect(GatewayClient.open(url, factory)).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });
});

describe("payloadText", () => {
  it("joins the text items and skips the rest", () => {
    expect(payloadText([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }])).toBe("a\n\nb");
  });
});
