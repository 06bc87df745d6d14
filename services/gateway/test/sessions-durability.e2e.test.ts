import { randomUUID } from "node:crypto";
import { callRpc, connectNats, createSubjects, NatsBus } from "@gw/bus";
import { RPC } from "@gw/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { freePort, waitUntil } from "@gw/testing";
import { spawnService, waitHealthy } from "./fixtures/processes.js";
import { driveAppends, expectIntactSession, killHard } from "./fixtures/session-load.js";
import { WsClient } from "./fixtures/ws-client.js";

const SESSIONS = 10;
const PER_SESSION = 100;
const keysFor = (tag: string) => Array.from({ length: SESSIONS }, (_, i) => `durable:${tag}-${i}`);

/** 1,000 messages across 10 sessions, with the storage's owner killed (-9) in the middle. */
describe("session durability (distributed: JetStream)", () => {
  let gw: GatewayUnderTest;
  let bus: NatsBus;
  let client: WsClient;
  const subjects = createSubjects();

  beforeAll(async () => {
    gw = await startGateway("distributed");
    bus = new NatsBus(await connectNats({ url: gw.nats!.url }));
    client = await WsClient.open(gw.wsUrl());
    await client.connect(TOKEN);
  });
  afterAll(async () => {
    client?.close();
    await bus?.close();
    await gw?.stop();
  });

  const append = async (key: string, body: string) => {
    await callRpc(bus, subjects, RPC.sessionsAppend, {
      key,
      agentId: "",
      entries: [{ role: "user", sender: "load", body, runId: "", metaJson: Buffer.alloc(0) }],
    }, { timeoutMs: 3_000 });
  };

  it("keeps every acknowledged message across kill -9 of the sessions service", async () => {
    const keys = keysFor(randomUUID().slice(0, 6));
    const progress = { acked: 0, failed: 0 };
    const load = driveAppends({ keys, perSession: PER_SESSION, append }, progress);
    await waitUntil(() => progress.acked >= 300, { timeoutMs: 60_000 });
    await killHard(gw.sessions![0]!);
    const ackedAtKill = progress.acked;
    await new Promise((r) => setTimeout(r, 500));
    await gw.addSessionsReplica!();
    const acked = await load;
    expect(ackedAtKill).toBeLessThan(SESSIONS * PER_SESSION);
    expect(progress.failed).toBeGreaterThan(0);
    for (const key of keys) {
      expect(acked.get(key)).toHaveLength(PER_SESSION);
      await expectIntactSession(client, key, acked.get(key)!);
    }
  });

  it("keeps every acknowledged message of two writers per session across kill -9 of the sessions service", async () => {
    // Two appends to the same session at once, all the time: each writer's acknowledged
    // messages must all be there, in its own order, on one linear chain.
    const keys = keysFor(randomUUID().slice(0, 6));
    const progress = { acked: 0, failed: 0 };
    const writer = (tag: string) =>
      driveAppends({ keys, perSession: PER_SESSION / 2, append: (key, body) => append(key, `${tag}-${body}`) }, progress);
    const load = Promise.all([writer("a"), writer("b")]);
    await waitUntil(() => progress.acked >= 300, { timeoutMs: 60_000 });
    await killHard(gw.sessions!.at(-1)!);
    await new Promise((r) => setTimeout(r, 500));
    await gw.addSessionsReplica!();
    const [a, b] = await load;
    expect(progress.failed).toBeGreaterThan(0);
    for (const key of keys) {
      await expectIntactSession(client, key, a.get(key)!.map((body) => `a-${body}`));
      await expectIntactSession(client, key, b.get(key)!.map((body) => `b-${body}`));
    }
  });

  it("keeps every acknowledged message across a nats-server kill and restart on the same store", async () => {
    const keys = keysFor(randomUUID().slice(0, 6));
    const progress = { acked: 0, failed: 0 };
    const load = driveAppends({ keys, perSession: PER_SESSION, append }, progress);
    await waitUntil(() => progress.acked >= 300, { timeoutMs: 60_000 });
    await gw.nats!.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 500));
    await gw.nats!.start();
    const acked = await load;
    expect(progress.failed).toBeGreaterThan(0);
    for (const key of keys) {
      expect(acked.get(key)).toHaveLength(PER_SESSION);
      await expectIntactSession(client, key, acked.get(key)!);
    }
  });
});

/** The same through the public surface in embedded mode: `agent` runs, gateway killed -9 mid-stream. */
describe("session durability (embedded: files)", () => {
  let gw: GatewayUnderTest;
  const clients: WsClient[] = [];
  let restarted: ReturnType<typeof spawnService> | undefined;
  let url: string;
  /** The first test's sessions and what was acknowledged in each. */
  let lastKeys: { keys: string[]; acked: Map<string, string[]> } | undefined;

  beforeAll(async () => {
    gw = await startGateway("embedded");
    url = gw.wsUrl();
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await restarted?.stop();
    await gw?.stop();
  });

  /** One socket per session, reopened after the gateway comes back. */
  const sockets = new Map<string, WsClient>();
  const socketFor = async (key: string) => {
    let client = sockets.get(key);
    if (!client || client.closed) {
      client = await WsClient.open(url);
      clients.push(client);
      expect((await client.connect(TOKEN)).ok).toBe(true);
      sockets.set(key, client);
    }
    return client;
  };
  const run = async (key: string, body: string) => {
    const res = await (await socketFor(key)).request("agent", { message: body, sessionKey: key });
    if (!res.ok) throw new Error(JSON.stringify(res.error));
  };

  it("keeps every acknowledged exchange across kill -9 of the gateway", async () => {
    const keys = keysFor(randomUUID().slice(0, 6));
    const progress = { acked: 0, failed: 0 };
    // Each run appends the user message and the answer: 50 runs per session = 100 messages.
    const load = driveAppends({ keys, perSession: PER_SESSION / 2, append: run }, progress);
    await waitUntil(() => progress.acked >= 150, { timeoutMs: 60_000 });
    await killHard(gw.edges[0]!.proc);
    const port = await freePort();
    restarted = spawnService("gateway-2", "services/gateway/src/cli.ts", [
      "start", "--config", gw.configPath, "--port", String(port),
    ], { E2E_GATEWAY_TOKEN: TOKEN });
    await waitHealthy(restarted, `http://127.0.0.1:${port}`);
    url = `ws://127.0.0.1:${port}/`;
    const acked = await load;
    expect(progress.failed).toBeGreaterThan(0);
    const reader = await WsClient.open(url);
    clients.push(reader);
    await reader.connect(TOKEN);
    for (const key of keys) {
      const messages = await expectIntactSession(reader, key, acked.get(key)!);
      expect(messages.length).toBeGreaterThanOrEqual(PER_SESSION);
    }
    // Killed, the gateway left no snapshot: the restart read every session's files.
    expect(restarted.fullOutput()).toContain('"from":"files"');
    reader.close();
    lastKeys = { keys, acked };
  });

  it("starts from the snapshot a clean stop leaves, with every session as it was", async () => {
    expect(lastKeys).toBeDefined();
    await restarted!.stop();
    const port = await freePort();
    restarted = spawnService("gateway-3", "services/gateway/src/cli.ts", [
      "start", "--config", gw.configPath, "--port", String(port),
    ], { E2E_GATEWAY_TOKEN: TOKEN });
    await waitHealthy(restarted, `http://127.0.0.1:${port}`);
    expect(restarted.fullOutput()).toContain("sessions loaded from the clean stop's snapshot");
    const reader = await WsClient.open(`ws://127.0.0.1:${port}/`);
    clients.push(reader);
    await reader.connect(TOKEN);
    for (const key of lastKeys!.keys) {
      const messages = await expectIntactSession(reader, key, lastKeys!.acked.get(key)!);
      expect(messages.length).toBeGreaterThanOrEqual(PER_SESSION);
    }
  });
});
