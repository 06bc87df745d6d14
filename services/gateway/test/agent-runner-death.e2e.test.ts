import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_AGENTS, runModels, send, waitRunEvent } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

/** The documented bound (docs/decisions.md): heartbeat TTL 6 s + one 1 s poll, plus slack for a loaded CI box. */
const DEATH_BOUND_MS = 15_000;

describe("a runner killed mid-run (distributed)", () => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  let client: WsClient | undefined;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway("distributed", { edges: 2, agents: RUN_AGENTS, models: runModels(fake) });
  });
  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await fake?.close();
  });

  it("ends the run with lifecycle error and an error response, and agent.wait elsewhere sees it", async () => {
    client = await WsClient.open(gw.wsUrl(0));
    await client.connect(TOKEN, "node");
    const runId = "death-1";
    const response = send(client, "agent", { message: "slow die", sessionKey: "e2e:death", agentId: "oa", runId }, DEATH_BOUND_MS + 5_000);
    await waitRunEvent(client, runId, (e) => e.stream === "assistant");
    await gw.runner!.proc.kill("SIGKILL");
    const last = await waitRunEvent(client, runId, (e) => e.stream === "lifecycle", DEATH_BOUND_MS).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${gw.logs()}`);
    });
    expect(last.data).toMatchObject({ phase: "error", code: "UNAVAILABLE" });
    expect(await response).toMatchObject({ ok: false, error: { code: "UNAVAILABLE" } });
    const other = await WsClient.open(gw.wsUrl(1));
    await other.connect(TOKEN, "node");
    expect(await send(other, "agent.wait", { runId })).toMatchObject({ ok: true, payload: { completed: true, status: "error" } });
    other.close();
  });
});
