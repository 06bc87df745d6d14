import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type AgentEvent, assistantText, collectRun, RUN_AGENTS, runModels, send } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { type Frame, WsClient } from "./fixtures/ws-client.js";

/** WebSocket clients mid-run when the edge gets SIGTERM. */
const CLIENTS = 100;
/** The fake model's `slow` answer: 40 chunks, 100 ms apart (about 4 s). */
const SLOW_ANSWER = Array.from({ length: 40 }, (_, i) => `w${i} `).join("");

/** A streaming chat completion read to its end: content, finish reasons, error chunks, [DONE]. */
async function streamCompletion(baseUrl: string, user: string): Promise<{ content: string; finish: string[]; errors: unknown[]; done: boolean }> {
  const res = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "oa", stream: true, user, messages: [{ role: "user", content: "slow please" }] }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  const out = { content: "", finish: [] as string[], errors: [] as unknown[], done: false };
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ")) continue;
    const data = line.slice(6);
    if (data === "[DONE]") {
      out.done = true;
      continue;
    }
    const chunk = JSON.parse(data) as { error?: unknown; choices?: Array<{ delta: { content?: string }; finish_reason: string | null }> };
    if (chunk.error) out.errors.push(chunk.error);
    for (const choice of chunk.choices ?? []) {
      out.content += choice.delta.content ?? "";
      if (choice.finish_reason) out.finish.push(choice.finish_reason);
    }
  }
  return out;
}

async function startDrainGateway(fake: FakeModelServer, shutdownTimeoutMs: number): Promise<GatewayUnderTest> {
  return startGateway("distributed", {
    edges: 2,
    runners: 2,
    agents: RUN_AGENTS,
    models: {
      providers: Object.fromEntries(
        Object.entries(runModels(fake).providers).map(([name, p]) => [name, { ...p, timeoutMs: 20_000 }]),
      ),
    },
    runner: { maxConcurrentRuns: 64 },
    extraConfig: { ops: { logLevel: "info", shutdownTimeoutMs } },
  });
}

/** The run's events a client has received so far, by seq, taken off its socket's buffer. */
async function receivedSoFar(client: WsClient, runId: string, first: AgentEvent): Promise<AgentEvent[]> {
  const events = [first];
  for (;;) {
    const frame = await client.next((f) => f.event === "agent" && (f.payload as { runId?: string }).runId === runId, 1).catch(() => undefined);
    if (frame === undefined) return events.sort((a, b) => a.seq - b.seq);
    events.push(frame.payload as unknown as AgentEvent);
  }
}

/**
 * A client cut off mid-run that reconnects to another edge and resumes its run after the last
 * seq it saw (agent.subscribe): every event it missed, then the live ones, through the end.
 */
async function resumeElsewhere(url: string, runId: string, seen: AgentEvent[]): Promise<AgentEvent[]> {
  expect(seen.map((e) => e.seq), runId).toEqual(seen.map((_, i) => i + 1));
  const client = await WsClient.open(url);
  try {
    expect((await client.connect(TOKEN)).ok).toBe(true);
    const resumed = await send(client, "agent.subscribe", { runId, afterSeq: seen.at(-1)!.seq }, 15_000);
    expect(resumed, JSON.stringify(resumed)).toMatchObject({ ok: true, payload: { runId } });
    return [...seen, ...(await collectRun(client, runId, 15_000))];
  } finally {
    client.close();
  }
}

/** CLIENTS control clients on edge 0, each with a slow run in flight; resolves once every run streams. */
async function clientsMidRun(gw: GatewayUnderTest, tag: string) {
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const client = await WsClient.open(gw.wsUrl(0));
      expect((await client.connect(TOKEN)).ok).toBe(true);
      return client;
    }),
  );
  const runs = clients.map((client, i) => {
    const runId = `${tag}-${i}`;
    return { client, runId, answer: send(client, "agent", { message: "slow please", sessionKey: `user:${tag}-${i}`, agentId: "oa", runId }, 30_000) };
  });
  // Every run has streamed something: the runs are mid-flight.
  const firsts = await Promise.all(runs.map(({ client, runId }) => client.next((f) => f.event === "agent" && (f.payload as { runId?: string; stream?: string }).runId === runId && (f.payload as { stream?: string }).stream === "assistant", 15_000)));
  return runs.map((run, i) => ({ ...run, first: firsts[i]!.payload as unknown as AgentEvent }));
}

describe("SIGTERM on an edge with clients mid-run (distributed)", () => {
  let fake: FakeModelServer | undefined;
  let gw: GatewayUnderTest | undefined;
  afterEach(async () => {
    await gw?.stop();
    await fake?.close();
    gw = undefined;
    fake = undefined;
  });

  it("tells every client, refuses new work, lets runs and streams finish whole, then closes with 1012", async () => {
    fake = await startFakeModelServer();
    gw = await startDrainGateway(fake, 15_000);
    const runs = await clientsMidRun(gw, "whole");
    const streams = [streamCompletion(gw.httpUrl(0), "drain-sse-1"), streamCompletion(gw.httpUrl(0), "drain-sse-2")];
    await new Promise((resolve) => setTimeout(resolve, 500));
    const edge = gw.edges[0]!.proc;
    const exited = new Promise<number | null>((resolve) => edge.child.once("exit", (code) => resolve(code)));
    const signalled = Date.now();
    edge.child.kill("SIGTERM");

    const notices = await Promise.all(runs.map(({ client }) => client.next((f) => f.event === "shutdown", 5_000)));
    for (const notice of notices) {
      expect(notice.payload).toMatchObject({ reason: expect.any(String), reconnectAfterMs: expect.any(Number), closesBy: expect.any(Number) });
      expect(notice.payload!.reconnectAfterMs as number).toBeGreaterThan(0);
    }
    // New work is refused at once, with an error the client can act on.
    const refused = await send(runs[0]!.client, "agents.list", {});
    expect(refused.error?.code).toBe("UNAVAILABLE");

    const answers: Frame[] = await Promise.all(runs.map(({ answer }) => answer));
    for (const [i, answer] of answers.entries()) {
      expect(answer.ok, JSON.stringify(answer)).toBe(true);
      expect(answer.payload).toMatchObject({ runId: runs[i]!.runId, payloads: [{ type: "text", text: SLOW_ANSWER }] });
    }
    for (const stream of await Promise.all(streams)) {
      expect(stream).toEqual({ content: SLOW_ANSWER, finish: ["stop"], errors: [], done: true });
    }
    const closes = await Promise.all(runs.map(({ client }) => client.waitClosed(10_000)));
    expect(closes.map((c) => c.code)).toEqual(Array(CLIENTS).fill(1012));
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(15_000);
    // The other edge serves on, and knows every run's outcome.
    const other = await WsClient.open(gw.wsUrl(1));
    expect((await other.connect(TOKEN)).ok).toBe(true);
    const waited = await other.request("agent.wait", { runId: runs[0]!.runId, timeoutSeconds: 5 });
    expect(waited.payload).toMatchObject({ completed: true, status: "ok" });
    other.close();
  }, 60_000);

  it("cuts off what cannot finish by the deadline: errors naming the run, never a stream ending in stop; the clients resume their runs on the other edge", async () => {
    fake = await startFakeModelServer();
    // The drain gets ops.shutdownTimeoutMs less 2 s for closing: 1 s, while a run takes 4 s.
    gw = await startDrainGateway(fake, 3_000);
    const runs = await clientsMidRun(gw, "cut");
    const stream = streamCompletion(gw.httpUrl(0), "drain-sse-cut");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const edge = gw.edges[0]!.proc;
    const exited = new Promise<number | null>((resolve) => edge.child.once("exit", (code) => resolve(code)));
    edge.child.kill("SIGTERM");

    // Each client, told its run was cut off, stops reading the old socket, reconnects to the
    // other edge and resumes the run after the last event it saw: nothing missing, nothing twice.
    const resumed = Promise.all(
      runs.map(async ({ client, runId, answer, first }) => {
        const cut = await answer;
        expect(cut.ok).toBe(false);
        expect(cut.error).toMatchObject({ code: "UNAVAILABLE", details: { runId } });
        return resumeElsewhere(gw!.wsUrl(1), runId, await receivedSoFar(client, runId, first));
      }),
    );
    const cut = await stream;
    expect(cut.finish).not.toContain("stop");
    expect(cut.errors).toEqual([expect.objectContaining({ type: "api_error" })]);
    expect(SLOW_ANSWER.startsWith(cut.content)).toBe(true);
    expect(cut.content.length).toBeLessThan(SLOW_ANSWER.length);
    expect((await Promise.all(runs.map(({ client }) => client.waitClosed(10_000)))).map((c) => c.code)).toEqual(Array(CLIENTS).fill(1012));
    expect(await exited).toBe(0);
    for (const [i, events] of (await resumed).entries()) {
      const runId = runs[i]!.runId;
      expect(events.map((e) => e.seq), runId).toEqual(events.map((_, n) => n + 1));
      expect(events.at(-1)!.data.phase, runId).toBe("end");
      expect(assistantText(events), runId).toBe(SLOW_ANSWER);
    }

    // The runs went on: another edge has every outcome, whole.
    const other = await WsClient.open(gw.wsUrl(1));
    expect((await other.connect(TOKEN)).ok).toBe(true);
    for (const { runId } of runs) {
      const waited = await other.request("agent.wait", { runId, timeoutSeconds: 15 });
      expect(waited.payload, runId).toMatchObject({ completed: true, status: "ok", result: { payloads: [{ type: "text", text: SLOW_ANSWER }] } });
    }
    other.close();
  }, 60_000);
});
