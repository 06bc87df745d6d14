import { randomUUID } from "node:crypto";
import { callRpc, connectNats, createSubjects, NatsBus } from "@gw/bus";
import { RPC } from "@gw/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { driveAppends, expectIntactSession, killHard } from "./fixtures/session-load.js";
import { WsClient } from "./fixtures/ws-client.js";

/**
 * Two sessions replicas share the partitions (distributed mode only: embedded mode is one
 * process, with nothing to share). Requests reach either replica; the one that does not own the
 * key's partition passes them on to `sessions-p<i>`, so in the replicas' request metrics each
 * partition subject shows up on one replica only.
 */
describe("sessions partitions across replicas (distributed)", () => {
  let gw: GatewayUnderTest;
  let bus: NatsBus;
  let client: WsClient;
  const subjects = createSubjects();

  beforeAll(async () => {
    gw = await startGateway("distributed", { sessionsReplicas: 2, health: true });
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
    const entries = [{ role: "user", sender: "load", body, runId: "", metaJson: Buffer.alloc(0) }];
    await callRpc(bus, subjects, RPC.sessionsAppend, { key, agentId: "", entries }, { timeoutMs: 3_000 });
  };

  /** Partitions whose subject each sessions replica served requests on, from its metrics. */
  const partitionsServed = async (): Promise<Map<string, Set<string>>> => {
    const served = new Map<string, Set<string>>();
    for (const ops of gw.ops.filter((o) => o.name.startsWith("sessions"))) {
      const text = await (await fetch(`http://127.0.0.1:${ops.metricsPort}/metrics`)).text();
      const mine = new Set<string>();
      for (const match of text.matchAll(/gw_requests_total\{[^}]*method="sessions-(p\d+)\.[a-z]+"[^}]*\} (\d+)/g)) {
        if (Number(match[2]) > 0) mine.add(match[1]!);
      }
      served.set(ops.name, mine);
    }
    return served;
  };

  it("serves each partition on one replica, and everything on the survivor after kill -9 of the other", async () => {
    const tag = randomUUID().slice(0, 6);
    const keys = Array.from({ length: 32 }, (_, i) => `parts:${tag}-${i}`);
    // Both replicas heard each other within a heartbeat; give the views a moment to settle.
    await new Promise((r) => setTimeout(r, 1_500));
    const first = await driveAppends({ keys, perSession: 5, append });
    for (const key of keys) await expectIntactSession(client, key, first.get(key)!);
    const served = [...(await partitionsServed()).values()];
    expect(served).toHaveLength(2);
    expect(served.every((set) => set.size > 0)).toBe(true);
    expect([...served[0]!].filter((p) => served[1]!.has(p))).toEqual([]);

    await killHard(gw.sessions![0]!);
    const second = await driveAppends({ keys, perSession: 5, append });
    for (const key of keys) await expectIntactSession(client, key, [...first.get(key)!, ...second.get(key)!]);
    const listed = await client.request("sessions.list", { limit: 500 });
    const listedKeys = (listed.payload!.sessions as Array<{ key: string; messageCount: number }>).filter((s) => keys.includes(s.key));
    expect(listedKeys).toHaveLength(keys.length);
    // At least every acknowledged append (one cut off by the kill may have landed unacknowledged).
    expect(listedKeys.every((s) => s.messageCount >= 10)).toBe(true);
  });
});
