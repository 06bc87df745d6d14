import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { type Frame, WsClient } from "./fixtures/ws-client.js";

/**
 * Issue 29: a run aborted before its history read returned, on a session deleted meanwhile, left
 * the read's failure unhandled and Node ended the whole process. These races are what a client
 * can make happen at will: runs, aborts, deletes and resets on a few session keys at once.
 */
const SOCKETS = 4;
const ROUNDS = 60;
const KEYS = ["race:0", "race:1", "race:2"];

/** Every process of the gateway, alive or not. */
function processesOf(gw: GatewayUnderTest) {
  return [...gw.edges.map((e) => e.proc), ...(gw.runners ?? []), ...(gw.sessions ?? [])];
}

/** One socket's share of the races: each round a run, its abort at once, and a delete or reset. */
async function race(client: WsClient, lane: number): Promise<Frame[]> {
  const answers: Array<Promise<Frame>> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const sessionKey = KEYS[(lane + round) % KEYS.length]!;
    const runId = `race-${lane}-${round}`;
    answers.push(client.request("agent", { sessionKey, runId, message: `round ${round} of lane ${lane}` }, 30_000));
    answers.push(client.request("chat.abort", { runId }, 30_000));
    answers.push(client.request(round % 2 === 0 ? "sessions.delete" : "sessions.reset", { key: sessionKey }, 30_000));
    if (round % 5 === 4) await Promise.all(answers.slice(-15));
  }
  return Promise.all(answers);
}

describe.each(MODES)("runs aborted and sessions deleted while their history reads are in flight (%s)", (mode) => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    gw = await startGateway(mode);
    for (let i = 0; i < SOCKETS; i++) {
      const client = await WsClient.open(gw.wsUrl());
      expect((await client.connect(TOKEN)).ok).toBe(true);
      clients.push(client);
    }
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await gw?.stop();
  });

  it("answers every request, and no process fails or logs an unhandled fault", async () => {
    const answers = (await Promise.all(clients.map((client, lane) => race(client, lane)))).flat();
    expect(answers).toHaveLength(SOCKETS * ROUNDS * 3);
    // A race may refuse (the run was gone, the session deleted) but never fails inside the gateway.
    expect(answers.filter((frame) => frame.error?.code === "INTERNAL")).toEqual([]);
    for (const proc of processesOf(gw)) expect([proc.name, proc.child.exitCode, proc.child.signalCode]).toEqual([proc.name, null, null]);
    expect(gw.fullLogs()).not.toMatch(/unhandled promise rejection|uncaught exception/);

    // And the gateway still answers a plain run on a key the races deleted.
    const after = await clients[0]!.request("agent", { sessionKey: KEYS[0], message: "still here?" }, 30_000);
    expect(after.ok).toBe(true);
    expect(JSON.stringify(after.payload)).toContain("still here?");
  });
});

describe("runs aborted while their history reads hang on a stopped sessions service, past the read timeout (distributed)", () => {
  let gw: GatewayUnderTest;
  let client: WsClient;

  beforeAll(async () => {
    // A short bus timeout, so a read the stopped sessions service never answers fails soon.
    gw = await startGateway("distributed", { gateway: { limits: { requestTimeoutMs: 1_500 } } });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  });

  afterAll(async () => {
    client?.close();
    await gw?.stop();
  });

  it("leaves no read's failure unhandled, and the runner keeps serving", async () => {
    const sessions = gw.sessions![0]!;
    const keys = Array.from({ length: 12 }, (_, i) => `wait:${i}`);
    sessions.child.kill("SIGSTOP");
    const answers: Array<Promise<Frame>> = [];
    try {
      // Per key: run a holds the session and hangs on its read; run b waits its turn.
      for (const key of keys) {
        answers.push(client.request("agent", { sessionKey: key, runId: `${key}:a`, message: "first" }, 30_000));
        answers.push(client.request("agent", { sessionKey: key, runId: `${key}:b`, message: "second" }, 30_000));
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Both aborted at once: b may take the session a lets go of, already aborted, and read anyway.
      for (const key of keys) {
        answers.push(client.request("chat.abort", { runId: `${key}:a` }, 30_000));
        answers.push(client.request("chat.abort", { runId: `${key}:b` }, 30_000));
      }
      // Past the read timeout while the sessions service is still stopped.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    } finally {
      sessions.child.kill("SIGCONT");
    }
    const frames = await Promise.all(answers);
    expect(frames.filter((frame) => frame.error?.code === "INTERNAL")).toEqual([]);
    for (const proc of processesOf(gw)) expect([proc.name, proc.child.exitCode, proc.child.signalCode]).toEqual([proc.name, null, null]);
    expect(gw.fullLogs()).not.toMatch(/unhandled promise rejection|uncaught exception/);
    const after = await client.request("agent", { sessionKey: keys[0], message: "still here?" }, 30_000);
    expect(after.ok).toBe(true);
  });
});
