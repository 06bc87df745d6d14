import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { DEFAULT_DISCORD_BOTS } from "./fake-discord.js";
import { type FakeDiscordGateway, startFakeDiscordGateway } from "./fake-discord-gateway.js";

const [bot] = DEFAULT_DISCORD_BOTS;
type Payload = { op: number; t?: string; s?: number; d?: Record<string, unknown> | boolean | null };

/** A bare client that records every payload and close code. */
async function connect(url: string, query = "?v=10&encoding=json") {
  const socket = new WebSocket(`${url}/${query}`);
  const received: Payload[] = [];
  let closed: number | undefined;
  socket.on("message", (data) => received.push(JSON.parse(String(data)) as Payload));
  socket.on("close", (code) => (closed = code));
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  const until = async <T>(check: () => T | undefined): Promise<T> => {
    for (let i = 0; i < 200; i++) {
      const value = check();
      if (value !== undefined) return value;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error("timed out");
  };
  return {
    socket,
    received,
    send: (payload: unknown) => socket.send(JSON.stringify(payload)),
    next: (op: number, t?: string) => until(() => received.find((p) => p.op === op && (t === undefined || p.t === t))),
    closed: () => until(() => closed),
  };
}

describe("fake Discord Gateway", () => {
  let gw: FakeDiscordGateway;
  beforeEach(async () => {
    gw = await startFakeDiscordGateway({ bots: DEFAULT_DISCORD_BOTS, heartbeatIntervalMs: 1_000 });
  });
  afterEach(() => gw.close());

  it("says HELLO, acks heartbeats and answers IDENTIFY with READY", async () => {
    const c = await connect(gw.url);
    expect(await c.next(10)).toEqual({ op: 10, d: { heartbeat_interval: 1_000 } });
    c.send({ op: 1, d: null });
    await c.next(11);
    c.send({ op: 2, d: { token: bot!.token, intents: 37376, properties: { os: "linux", browser: "x", device: "x" } } });
    const ready = await c.next(0, "READY");
    expect(ready).toMatchObject({ s: 1, d: { user: { id: bot!.id, bot: true }, resume_gateway_url: gw.url } });
    expect(gw.stats).toMatchObject({ open: 1, identifies: 1, heartbeats: 1, intents: [37376] });
    const { id, seqs } = gw.userWrites({ channelId: "1", author: { id: "5", username: "p" }, content: "hi" });
    expect(seqs).toEqual([2]);
    expect(await c.next(0, "MESSAGE_CREATE")).toMatchObject({ s: 2, d: { id, content: "hi", channel_id: "1" } });
  });

  it("resumes a session on a new connection with the events it missed", async () => {
    const a = await connect(gw.url);
    a.send({ op: 2, d: { token: bot!.token, intents: 1 } });
    const ready = await a.next(0, "READY");
    const sessionId = (ready.d as { session_id: string }).session_id;
    gw.userWrites({ channelId: "1", author: { id: "5", username: "p" }, content: "seen" });
    await a.next(0, "MESSAGE_CREATE");
    gw.dropConnections();
    await a.closed();
    gw.userWrites({ channelId: "1", author: { id: "5", username: "p" }, content: "missed" });
    const b = await connect(gw.url);
    b.send({ op: 6, d: { token: bot!.token, session_id: sessionId, seq: 2 } });
    const resumed = await b.next(0, "RESUMED");
    expect(b.received.filter((p) => p.op === 0).map((p) => [p.t, p.s])).toEqual([
      ["MESSAGE_CREATE", 3],
      ["RESUMED", 4],
    ]);
    expect(resumed.s).toBe(4);
    expect(gw.stats).toMatchObject({ resumes: 1, resumed: 1, resumeSeqs: [2], identifies: 1 });
  });

  it("refuses resumes with INVALID_SESSION when told to, and forgets the session", async () => {
    const a = await connect(gw.url);
    a.send({ op: 2, d: { token: bot!.token, intents: 1 } });
    const sessionId = ((await a.next(0, "READY")).d as { session_id: string }).session_id;
    gw.refuseResumes(true);
    const b = await connect(gw.url);
    b.send({ op: 6, d: { token: bot!.token, session_id: sessionId, seq: 1 } });
    expect(await b.next(9)).toEqual({ op: 9, d: false });
    expect(gw.sessions()).toEqual([]);
  });

  it("closes with Discord's codes: 4004 bad token, 4005 second identify, 4003 before identify, 4012 bad version", async () => {
    const bad = await connect(gw.url);
    bad.send({ op: 2, d: { token: "nope", intents: 1 } });
    expect(await bad.closed()).toBe(4004);
    const twice = await connect(gw.url);
    twice.send({ op: 2, d: { token: bot!.token, intents: 1 } });
    twice.send({ op: 2, d: { token: bot!.token, intents: 1 } });
    expect(await twice.closed()).toBe(4005);
    const early = await connect(gw.url);
    early.send({ op: 3, d: {} });
    expect(await early.closed()).toBe(4003);
    const old = await connect(gw.url, "?v=6&encoding=json");
    expect(await old.closed()).toBe(4012);
  });

  it("asks clients to reconnect with op 7", async () => {
    const c = await connect(gw.url);
    gw.askToReconnect();
    expect(await c.next(7)).toEqual({ op: 7, d: null });
  });
});
