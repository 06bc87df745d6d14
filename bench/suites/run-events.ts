// Run events stored per second in one JetStream stream vs split over partitions (nats.runEventPartitions),
// both R3 on a 3-node NATS cluster: `npm run bench -- --only run-events --source`.
import { createSubjects, NatsBus } from "@gw/bus";
import { agentEventMessage, ensureRunEventStream, runEventStreamNames } from "@gw/runs";
import { type NatsClusterHandle, startNatsCluster } from "@gw/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { round } from "../lib/stats.js";
import { type BenchContext, type BenchResult, info, type Suite } from "../lib/suite.js";

const BENCH = "run events stored, 3-node cluster, R3";
/** Publishing connections, as runner processes: each publishes the events of its own runs. */
const PUBLISHERS = 3;
const RUNS_PER_PUBLISHER = 64;
/** Events sent before each flush: a runner's socket is never far ahead of the server. */
const FLUSH_EVERY = 500;
/** A round gives up waiting for its events to be stored after this long. */
const STORE_DEADLINE_MS = 60_000;
/** The split measured against one stream: one partition per node, so each node leads one. */
const SPLIT = 3;

interface RoundResult {
  eventsPerSecond: number;
  stored: number;
  sent: number;
  leaders: string[];
}

/** An assistant event of about the size a streamed chunk takes (~200 bytes on the wire). */
const TEXT = "x".repeat(120);

async function publishAll(nc: NatsConnection, layout: { prefix: string; partitions: number }, worker: number, perRun: number): Promise<void> {
  const subjects = createSubjects(layout.prefix, { runEventPartitions: layout.partitions });
  const bus = new NatsBus(nc);
  let sent = 0;
  for (let seq = 1; seq <= perRun; seq++) {
    for (let r = 0; r < RUNS_PER_PUBLISHER; r++) {
      const runId = `bench-${worker}-${r}`;
      const run = { runId, sessionKey: `bench:${worker}:${r}`, edgeId: `edge-${r % 4}` };
      const m = agentEventMessage(subjects, run, { runId, stream: "assistant", data: { text: TEXT } }, seq);
      bus.publish(m.subject, m.data);
      if (++sent % FLUSH_EVERY === 0) await nc.flush();
    }
  }
  await nc.flush();
}

/**
 * Waits until every publisher's server captures into every stream (a stream just created on a
 * cluster reaches each node's interest a moment later: a core publish before that is not stored),
 * by one acknowledged publish to each stream's barrier from each publisher. Returns how many.
 */
async function streamsReady(publishers: NatsConnection[], barriers: string[]): Promise<number> {
  const deadline = performance.now() + 10_000;
  const once = async (nc: NatsConnection, subject: string): Promise<void> => {
    for (;;) {
      try {
        await jetstream(nc).publish(subject, new Uint8Array(0));
        return;
      } catch (err) {
        if (performance.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  await Promise.all(publishers.flatMap((nc) => barriers.map((subject) => once(nc, subject))));
  return publishers.length * barriers.length;
}

async function storedCount(nc: NatsConnection, streams: string[]): Promise<{ messages: number; leaders: string[] }> {
  const jsm = await jetstreamManager(nc);
  const infos = await Promise.all(streams.map((s) => jsm.streams.info(s)));
  return { messages: infos.reduce((n, i) => n + i.state.messages, 0), leaders: infos.map((i) => i.cluster?.leader ?? "?") };
}

/** One round: fresh streams, every publisher sending at once, timed until the last event is stored. */
async function measure(cluster: NatsClusterHandle, partitions: number, perRun: number, tag: string): Promise<RoundResult> {
  const layout = { prefix: `bench${tag}`, partitions };
  const admin = await connect({ servers: cluster.urls });
  const publishers = await Promise.all(cluster.urls.slice(0, PUBLISHERS).map((url) => connect({ servers: url })));
  const names = runEventStreamNames(layout);
  const streams = names.map((s) => s.stream);
  try {
    await ensureRunEventStream(admin, { ...layout, retention: { maxAgeMs: 600_000, maxBytes: 1 << 30 }, replicas: 3 });
    const probes = await streamsReady(publishers, names.map((s) => s.barrier));
    const sent = PUBLISHERS * RUNS_PER_PUBLISHER * perRun;
    const started = performance.now();
    await Promise.all(publishers.map((nc, worker) => publishAll(nc, layout, worker, perRun)));
    let last = await storedCount(admin, streams);
    while (last.messages - probes < sent && performance.now() - started < STORE_DEADLINE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      last = await storedCount(admin, streams);
    }
    const seconds = (performance.now() - started) / 1000;
    const stored = last.messages - probes;
    return { eventsPerSecond: Math.round(stored / seconds), stored, sent, leaders: last.leaders };
  } finally {
    const jsm = await jetstreamManager(admin);
    await Promise.all(streams.map((s) => jsm.streams.delete(s).catch(() => undefined)));
    await Promise.all([...publishers, admin].map((nc) => nc.close()));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const perRun = ctx.args.quick ? 20 : 500;
  const cluster = await startNatsCluster();
  try {
    const one: RoundResult[] = [];
    const split: RoundResult[] = [];
    // Interleaved, so a slow minute of this shared machine slows both.
    for (let r = 0; r < ctx.args.rounds; r++) {
      one.push(await measure(cluster, 1, perRun, `o${r}`));
      split.push(await measure(cluster, SPLIT, perRun, `s${r}`));
      ctx.log(`  round ${r + 1}: one stream ${one.at(-1)!.eventsPerSecond}/s, ${SPLIT} streams ${split.at(-1)!.eventsPerSecond}/s (leaders ${split.at(-1)!.leaders.join(",")})`);
    }
    const ratios = one.map((o, i) => round(split[i]!.eventsPerSecond / o.eventsPerSecond, 2));
    ctx.log(`  ratio per round ${ratios.join(", ")}; lost ${[...one, ...split].reduce((n, r) => n + r.sent - r.stored, 0)} events`);
    const figure = info(`events stored/s, ${SPLIT} streams vs one (median of ${ctx.args.rounds})`, "events/s", median(split.map((s) => s.eventsPerSecond)), median(one.map((o) => o.eventsPerSecond)));
    return [{ bench: BENCH, status: "ok", figures: [figure], details: { publishers: PUBLISHERS, runs: PUBLISHERS * RUNS_PER_PUBLISHER, eventsPerRound: one[0]!.sent, one, split, ratios } }];
  } finally {
    await cluster.stop();
  }
}

export const runEventsSuite: Suite = { name: "run-events", run, optIn: true };
