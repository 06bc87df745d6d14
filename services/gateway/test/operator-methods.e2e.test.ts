import { waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitRunEvent } from "./fixtures/agent-runs.js";
import { MODES, TOKEN } from "./fixtures/gateway.js";
import { type OperatorGateway, startOperatorGateway } from "./fixtures/operator.js";
import { WsClient } from "./fixtures/ws-client.js";

describe.each(MODES)("operator methods: channels.pairing.reject, runs.list, gateway.status (%s)", (mode) => {
  let op: OperatorGateway;
  let control: WsClient;
  const edgeCount = mode === "distributed" ? 2 : 1;

  beforeAll(async () => {
    op = await startOperatorGateway(mode, { edges: edgeCount });
    control = await WsClient.open(op.gw.wsUrl(0));
    expect((await control.connect(TOKEN)).ok).toBe(true);
  });
  afterAll(async () => {
    control?.close();
    await op?.stop();
  });

  it("rejects a pending sender: the request is gone, not approved, and an unknown code is NOT_FOUND like approve's", async () => {
    const code = await op.strangerWrites(7001, "let me in");
    expect((await control.request("channels.pairing.list", { channel: "tg" })).payload?.requests).toEqual([
      expect.objectContaining({ sender: "7001", code }),
    ]);
    const unknown = await control.request("channels.pairing.reject", { channel: "tg", code: "NOPE-NOPE" });
    const unknownApprove = await control.request("channels.pairing.approve", { channel: "tg", code: "NOPE-NOPE" });
    expect(unknown.error?.code).toBe("NOT_FOUND");
    expect(unknown.error?.message).toBe(unknownApprove.error?.message);
    expect((await control.request("channels.pairing.reject", { channel: "tg" })).error?.code).toBe("INVALID_REQUEST");

    const rejected = await control.request("channels.pairing.reject", { channel: "tg", code: code.toLowerCase() });
    expect(rejected.payload).toMatchObject({ rejected: true, channel: "tg", sender: "7001", code });
    expect((await control.request("channels.pairing.list", { channel: "tg" })).payload?.requests).toEqual([]);
    expect((await control.request("channels.pairing.approve", { channel: "tg", code })).error?.code).toBe("NOT_FOUND");
    // Still a stranger: no answer from the agent, only the pairing notice and no approval notice.
    expect(op.telegram.delivered.filter((d) => d.chat === "7001").map((d) => d.text)).toEqual([expect.stringMatching(/pairing code is/)]);
  });

  it("lists a run in flight from any edge with where it runs, filters it, and drops it once it ends", async () => {
    const runner = await WsClient.open(op.gw.wsUrl(edgeCount - 1));
    try {
      expect((await runner.connect(TOKEN)).ok).toBe(true);
      const runId = `op-list-${mode}`;
      const answered = runner.request("agent", { message: "hang", sessionKey: "ops:runs-list", agentId: "oa", runId }, 60_000);
      await waitRunEvent(runner, runId, (e) => e.stream === "lifecycle" && e.data.phase === "start");
      const listed = await waitFor(async () => {
        const runs = (await control.request("runs.list", {})).payload?.runs as Array<Record<string, unknown>>;
        return runs.find((r) => r.runId === runId && r.status === "running");
      });
      expect(listed).toMatchObject({ sessionKey: "ops:runs-list", agentId: "oa", edgeId: expect.any(String), runner: expect.any(String) });
      expect((await control.request("runs.list", { sessionKey: "ops:other" })).payload?.runs).toEqual([]);
      expect((await control.request("runs.list", { agentId: "oa", limit: 5 })).payload?.runs).toEqual([expect.objectContaining({ runId })]);
      expect((await control.request("runs.list", { limit: 0 })).error?.code).toBe("INVALID_REQUEST");
      const status = await control.request("gateway.status", {});
      expect(status.payload?.runs).toMatchObject({ inFlight: 1, running: 1 });

      expect((await control.request("chat.abort", { runId })).payload).toMatchObject({ aborted: true });
      expect((await answered).error?.code).toBe("ABORTED");
      await waitFor(async () => (((await control.request("runs.list", {})).payload?.runs as unknown[]).length === 0 ? true : undefined), {
        what: "the aborted run to leave runs.list",
      });
    } finally {
      runner.close();
    }
  });

  it("gateway.status: every edge seen, the services answering, the channels summed up", async () => {
    const status = await waitFor(async () => {
      const payload = (await control.request("gateway.status", {})).payload as { edges: unknown[] } | undefined;
      return payload !== undefined && payload.edges.length === edgeCount ? payload : undefined;
    }, { timeoutMs: 15_000, what: `${edgeCount} edges in gateway.status` });
    expect(status).toMatchObject({
      version: expect.any(String),
      edges: Array.from({ length: edgeCount }, () => expect.objectContaining({ edgeId: expect.any(String), draining: false, connections: expect.any(Number) })),
      services: [
        { service: "agent-runner", ready: true, error: null },
        { service: "sessions", ready: true, error: null },
        { service: "delivery", ready: true, error: null },
      ],
      hooks: { enabled: false },
      channels: { channels: 1, accounts: 1, byChannel: [expect.objectContaining({ id: "tg", kind: "telegram", accounts: 1 })] },
      runs: { inFlight: 0 },
    });
  });

  it("keeps the three methods to control connections", async () => {
    const webchat = await WsClient.open(op.gw.wsUrl(0));
    try {
      expect((await webchat.connect(TOKEN, "webchat")).ok).toBe(true);
      for (const method of ["runs.list", "gateway.status", "channels.pairing.reject"]) {
        expect((await webchat.request(method, { channel: "tg", code: "ABCD-EFGH" })).error?.code, method).toBe("FORBIDDEN");
      }
    } finally {
      webchat.close();
    }
  });
});
