import { connectNats, createSubjects, decodeSubjectToken } from "@gw/bus";
import { runEventStreamNames } from "@gw/runs";
import { startFakeModelServer, type FakeModelServer } from "@gw/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvent, collectRun, RUN_AGENTS, runModels, send, waitRunEvent } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

/** Run events spread over this many streams (nats.runEventPartitions). */
const PARTITIONS = 4;
const layout = { prefix: "gw", partitions: PARTITIONS };
const subjects = createSubjects(layout.prefix, { runEventPartitions: PARTITIONS });

/** One run id per partition: `<base>-<n>` for the first n that hashes to it. */
function runIdPerPartition(base: string): string[] {
  const ids: string[] = [];
  for (let n = 0; ids.length < PARTITIONS; n++) {
    const id = `${base}-${n}`;
    if (subjects.runEventPartition(id) === ids.length) ids.push(id);
  }
  return ids;
}

/** The run ids whose events each partition's stream holds (distributed mode). */
async function runsPerStream(gw: GatewayUnderTest): Promise<Set<string>[]> {
  const nc = await connectNats({ url: gw.nats!.url });
  try {
    const jsm = await jetstreamManager(nc);
    return await Promise.all(
      runEventStreamNames(layout).map(async (names) => {
        const info = await jsm.streams.info(names.stream, { subjects_filter: ">" });
        const runs = Object.keys(info.state.subjects ?? {}).filter((s) => s !== names.barrier);
        return new Set(runs.map((s) => decodeSubjectToken(s.split(".").at(-2)!)));
      }),
    );
  } finally {
    await nc.close();
  }
}

describe.each(MODES)("run events in partitions (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  const clients: WsClient[] = [];
  const open = async (edge: number) => {
    const client = await WsClient.open(gw.wsUrl(Math.min(edge, gw.edges.length - 1)));
    clients.push(client);
    expect((await client.connect(TOKEN, "node")).ok).toBe(true);
    return client;
  };
  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway(mode, { edges: 2, agents: RUN_AGENTS, models: runModels(fake), nats: { runEventPartitions: PARTITIONS } });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
    await fake?.close();
  });

  it("puts each run's events in its partition's stream, and another edge replays and waits on runs of every partition", async () => {
    const starter = await open(0);
    const runIds = runIdPerPartition(`spread-${mode}`);
    const seen = new Map<string, AgentEvent[]>();
    for (const runId of runIds) {
      expect((await send(starter, "agent", { message: `hello ${runId}`, sessionKey: `e2e:spread:${runId}`, runId })).ok).toBe(true);
      seen.set(runId, await collectRun(starter, runId));
    }
    const other = await open(1);
    for (const runId of runIds) {
      expect(await send(other, "agent.wait", { runId })).toMatchObject({ ok: true, payload: { completed: true, status: "ok" } });
      const replayed = await send(other, "agent.subscribe", { runId, afterSeq: 0 });
      expect(replayed).toMatchObject({ ok: true, payload: { subscribed: false, status: "ok", lastSeq: seen.get(runId)!.at(-1)!.seq } });
      expect(await collectRun(other, runId)).toEqual(seen.get(runId));
    }
    if (mode === "embedded") return;
    const stored = await runsPerStream(gw);
    runIds.forEach((runId, p) => {
      expect(stored.map((runs) => runs.has(runId))).toEqual(stored.map((_, q) => q === p));
    });
  });

  it("resumes a run on another connection, in distributed mode on another edge after the starting edge is killed: every missed event, then the live ones, to the end", async () => {
    const starter = await open(0);
    const [runId] = runIdPerPartition(`resume-${mode}`).slice(-1);
    expect((await send(starter, "agent", { message: "slow resume", sessionKey: `e2e:resume:${mode}`, agentId: "oa", runId })).ok).toBe(true);
    const early: AgentEvent[] = [];
    while (early.length < 4) early.push(await waitRunEvent(starter, runId!, () => true));
    if (mode === "distributed") await gw.edges[0]!.proc.kill("SIGKILL");
    const again = await open(1);
    const resumed = await send(again, "agent.subscribe", { runId, afterSeq: 4 });
    // Still running (then the live events follow the kept ones), or over on a loaded machine.
    expect(resumed, JSON.stringify(resumed)).toMatchObject({ ok: true, payload: { runId, status: expect.stringMatching(/^(running|ok)$/) } });
    const all = [...early, ...(await collectRun(again, runId!))];
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.at(-1)!.data.phase).toBe("end");
    expect(await send(again, "agent.wait", { runId })).toMatchObject({ ok: true, payload: { completed: true, status: "ok" } });
  }, 30_000);
});
