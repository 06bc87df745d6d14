import { randomUUID } from "node:crypto";
import { callRpc, connectNats, createSubjects, NatsBus } from "@gw/bus";
import { RPC } from "@gw/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { expectIntactSession } from "./fixtures/session-load.js";
import { type Frame, WsClient } from "./fixtures/ws-client.js";

/** Two edges, two sessions service replicas (one queue group), two bus clients racing them. */
describe("sessions under concurrency (distributed, 2 replicas)", () => {
  let gw: GatewayUnderTest;
  const buses: NatsBus[] = [];
  const clients: WsClient[] = [];
  const subjects = createSubjects();

  beforeAll(async () => {
    gw = await startGateway("distributed", { edges: 2, sessionsReplicas: 2 });
    for (let i = 0; i < 2; i++) buses.push(new NatsBus(await connectNats({ url: gw.nats!.url })));
    for (let edge = 0; edge < 2; edge++) {
      const client = await WsClient.open(gw.wsUrl(edge));
      expect((await client.connect(TOKEN)).ok).toBe(true);
      clients.push(client);
    }
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(buses.map((b) => b.close()));
    await gw?.stop();
  });

  const append = (bus: NatsBus, key: string, body: string) =>
    callRpc(bus, subjects, RPC.sessionsAppend, {
      key,
      agentId: "",
      entries: [{ role: "user", sender: "race", body, runId: "", metaJson: Buffer.alloc(0) }],
    }, { timeoutMs: 15_000 });

  it("leaves one linear chain of 50 entries after 50 concurrent appends to one session", async () => {
    const key = `race:${randomUUID().slice(0, 8)}`;
    const bodies = Array.from({ length: 50 }, (_, i) => `c${i}`);
    // NATS spreads a queue group's requests at random: both replicas take part (all 50 on one: p = 2^-49).
    const results = await Promise.all(bodies.map((b, i) => append(buses[i % 2]!, key, b)));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const messages = await expectIntactSession(clients[0]!, key, []);
    expect(messages).toHaveLength(50);
    expect(new Set(messages.map((m) => m.body))).toEqual(new Set(bodies));
    // Each acknowledged append saw its own entry placed right after the one before it.
    const byId = new Map(messages.map((m, i) => [m.id, i]));
    for (const r of results) expect(byId.has(r.entries[0]!.id)).toBe(true);
  });

  it("emits session.created exactly once per key when callers race on new keys from two edges", async () => {
    const tag = randomUUID().slice(0, 6);
    const viaBus = Array.from({ length: 10 }, (_, i) => `bus:${tag}-${i}`);
    const viaEdges = Array.from({ length: 5 }, (_, i) => `edge:${tag}-${i}`);
    await Promise.all([
      ...viaBus.flatMap((key) => Array.from({ length: 10 }, (_, i) => append(buses[i % 2]!, key, `b${i}`))),
      ...viaEdges.flatMap((key) =>
        clients.map((c) => c.request("agent", { message: "hello from two edges", sessionKey: key })),
      ),
    ]);
    await new Promise((r) => setTimeout(r, 1_000));
    for (const client of clients) {
      for (const key of [...viaBus, ...viaEdges]) {
        const isCreated = (f: Frame) =>
          f.event === "session.created" && (f.payload as { key?: string }).key === key;
        expect((await client.next(isCreated)).payload).toEqual({ key, agentId: "main" });
        await expect(client.next(isCreated, 50)).rejects.toThrow(/no matching frame/);
      }
    }
    for (const key of viaBus) {
      expect(await expectIntactSession(clients[1]!, key, [])).toHaveLength(10);
    }
  });

  it("sends session.updated from a patch on edge 0 to a control connection on edge 1, with only what changed", async () => {
    const [patcher, watcher] = clients as [WsClient, WsClient];
    const key = `patch:${randomUUID().slice(0, 8)}`;
    expect((await patcher.request("agent", { message: "hi", sessionKey: key })).ok).toBe(true);
    const isUpdated = (f: Frame) => f.event === "session.updated" && (f.payload as { key?: string }).key === key;
    const patch = async (params: Record<string, unknown>) => {
      const res = await patcher.request("sessions.patch", { key, ...params });
      expect(res.ok).toBe(true);
      return (await watcher.next(isUpdated)).payload;
    };
    expect(await patch({ model: "builtin/other" })).toEqual({ key, changes: { model: "builtin/other" } });
    // The model is already that: only thinking changed, and only thinking travels.
    expect(await patch({ model: "builtin/other", thinking: "high" })).toEqual({ key, changes: { thinking: "high" } });
    await expect(watcher.next(isUpdated, 500)).rejects.toThrow(/no matching frame/);
  });
});
