import { IncomingMessage } from "node:http";
import { queryObjects } from "node:v8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { EdgeSocket } from "../src/ws/edge-socket.js";
import { FUZZ_TOKEN, type FuzzEdge, startFuzzEdge } from "./fuzz-edge.js";

const SOCKETS = 40;

/** Live instances of a class after a full GC (`queryObjects` collects first). */
function live(ctor: new (...args: never[]) => unknown): number {
  return queryObjects(ctor, { format: "count" });
}

async function openConnected(url: string, id: number): Promise<WebSocket> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const answered = new Promise<{ ok?: boolean }>((resolve) =>
    socket.once("message", (data) => resolve(JSON.parse(String(data)) as { ok?: boolean })),
  );
  socket.send(JSON.stringify({ jsonrpc: "2.0", id, method: "connect", params: { role: "webchat", auth: { token: FUZZ_TOKEN } } }));
  expect((await answered).ok).toBe(true);
  return socket;
}

// An edge holds tens of thousands of idle sockets; what each one keeps alive is the memory bill.
describe("an idle authenticated connection", () => {
  let edge: FuzzEdge;
  beforeAll(async () => {
    edge = await startFuzzEdge();
  });
  afterAll(async () => {
    await edge?.close();
  });

  it("keeps its socket but not its upgrade request (headers and all)", async () => {
    const requestsBefore = live(IncomingMessage);
    const socketsBefore = live(EdgeSocket);
    const clients: WebSocket[] = [];
    for (let i = 0; i < SOCKETS; i++) clients.push(await openConnected(edge.url, i + 1));

    // Sanity: the edge really holds them, so the request count below is not vacuous.
    expect(live(EdgeSocket) - socketsBefore).toBe(SOCKETS);
    // The edge's upgrade requests would add one each (as they did before the upgrade handler
    // stopped capturing it); the ws client drops its upgrade responses too, so none at all.
    expect(live(IncomingMessage) - requestsBefore).toBe(0);

    await Promise.all(
      clients.map((c) => new Promise((resolve) => (c.once("close", resolve), c.close()))),
    );
  });
});
