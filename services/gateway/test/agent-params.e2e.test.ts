import { describe, expect, it } from "vitest";
import { collectRun, runGatewaySuite, send, waitRunEvent } from "./fixtures/agent-runs.js";
import { MODES } from "./fixtures/gateway.js";
import type { Frame, WsClient } from "./fixtures/ws-client.js";

const eventOf = (runId: string) => (f: Frame) => f.event === "agent" && (f.payload as { runId?: string } | undefined)?.runId === runId;

/** No `agent` event of `runId` reaches `client` within `ms`. */
async function expectNoEvents(client: WsClient, runId: string, ms = 500): Promise<void> {
  await expect(client.next(eventOf(runId), ms)).rejects.toThrow(/no matching frame/);
}

describe.each(MODES)("agent params (%s)", (mode) => {
  const suite = runGatewaySuite(mode, "node");
  const open = (edge?: number, role?: string) => suite.open(edge, role);

  it.each(["nocolon", ":x"])("refuses the malformed session key %j at the edge: no run, no events, the runId stays free", async (sessionKey) => {
    // A control connection hears every run's lifecycle events, whichever edge started the run.
    const watcher = await open(1, "control");
    const client = await open(0);
    const runId = `bad-key-${sessionKey.replace(/\W/g, "")}-${mode}`;
    const refused = await send(client, "agent", { message: "hi", sessionKey, runId });
    expect(refused).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    expect(refused.error?.message).toMatch(/^params\.sessionKey: /);
    await expectNoEvents(client, runId);
    await expectNoEvents(watcher, runId, 50);
    expect(await send(client, "agent.wait", { runId, timeoutSeconds: 1 })).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });

    for (const method of ["agent.subscribe", "agent.unsubscribe"]) {
      const res = await send(client, method, { sessionKey });
      expect(res).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
      expect(res.error?.message).toMatch(/^params\.sessionKey: /);
    }

    const retried = await send(client, "agent", { message: "hi again", sessionKey: `e2e:bad-key:${mode}`, runId });
    expect(retried).toMatchObject({ ok: true, payload: { runId, payloads: [{ type: "text", text: "hi again" }] } });
  });

  it("answers agent.wait on a run still going with completed: false and result.payloads empty (SPEC §4.1)", async () => {
    const client = await open(0);
    const other = await open(1);
    const runId = `wait-running-${mode}`;
    // `slow` streams for about 4 s.
    const response = send(client, "agent", { message: "slow still going", sessionKey: `e2e:wait-running:${mode}`, agentId: "oa", runId });
    await waitRunEvent(client, runId, (e) => e.stream === "assistant");
    const waited = await send(other, "agent.wait", { runId, timeoutSeconds: 1 });
    expect(waited).toEqual({ id: waited.id, ok: true, payload: { runId, completed: false, status: "running", result: { payloads: [] } } });
    expect(await send(other, "chat.abort", { runId })).toMatchObject({ ok: true, payload: { aborted: true } });
    expect(await response).toMatchObject({ ok: false, error: { code: "ABORTED" } });
  });

  it("takes a fractional timeoutSeconds and gives the run at least that long", async () => {
    const client = await open(0);
    const quick = await send(client, "agent", { message: "quick", sessionKey: `e2e:fraction:${mode}`, runId: `fraction-ok-${mode}`, timeoutSeconds: 1.5 });
    expect(quick).toMatchObject({ ok: true, payload: { payloads: [{ type: "text", text: "quick" }] } });

    const runId = `fraction-timeout-${mode}`;
    const started = Date.now();
    const response = send(client, "agent", { message: "slow fraction", sessionKey: `e2e:fraction-slow:${mode}`, agentId: "oa", runId, timeoutSeconds: 1.5 });
    const events = await collectRun(client, runId);
    expect(events.at(-1)!.data).toMatchObject({ phase: "error", code: "TIMEOUT" });
    expect(await response).toMatchObject({ ok: false, error: { code: "TIMEOUT" } });
    // Not cut to 1 s: the runner's whole-second deadline rounds 1.5 up.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
  });

  it("shows the agent's display name as the sender of its answers in sessions.preview", async () => {
    const client = await open(0);
    const key = `e2e:sender:${mode}`;
    for (const agentId of ["oa", "main"]) {
      expect(await send(client, "agent", { message: `hello ${agentId}`, sessionKey: `${key}:${agentId}`, agentId })).toMatchObject({ ok: true });
      const preview = await send(client, "sessions.preview", { key: `${key}:${agentId}` });
      const messages = preview.payload?.messages as Array<{ role: string; sender: string }>;
      const name = agentId === "oa" ? "OpenAI agent" : "Main";
      expect(messages.map((m) => [m.role, m.sender])).toEqual([
        ["assistant", name],
        ["user", "user"],
      ]);
    }
  });
});
