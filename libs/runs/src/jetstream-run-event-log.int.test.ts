import { createSubjects, NatsBus } from "@gw/bus";
import { type NatsServerHandle, startNats } from "@gw/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { agentEventMessage } from "./agent-events.js";
import { ensureRunEventStream, JetStreamRunEventLog, runEventStreamNames } from "./jetstream-run-event-log.js";
import { describeRunEventLogContract } from "./run-event-log.contract.js";

let nats: NatsServerHandle;
let counter = 0;
beforeAll(async () => {
  nats = await startNats();
});
afterAll(async () => {
  await nats?.stop();
});

for (const partitions of [1, 3]) {
  describeRunEventLogContract(`jetstream, ${partitions} partition(s)`, async (retention) => {
    const prefix = `t${++counter}${Math.random().toString(36).slice(2, 6)}`;
    // The reader and the publisher on separate connections, as an edge and a runner.
    const [reader, publisher] = await Promise.all([connect({ servers: nats.url }), connect({ servers: nats.url })]);
    await ensureRunEventStream(publisher, { prefix, partitions, retention });
    const bus = new NatsBus(publisher);
    return {
      log: new JetStreamRunEventLog(reader, { prefix, partitions }),
      bus,
      subjects: createSubjects(prefix, { runEventPartitions: partitions }),
      elapse: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      dispose: async () => {
        const jsm = await jetstreamManager(reader);
        await Promise.all(runEventStreamNames({ prefix, partitions }).map((s) => jsm.streams.delete(s.stream).catch(() => undefined)));
        await Promise.all([reader.close(), publisher.close()]);
      },
    };
  });
}

it("brings an existing stream's limits to the configured ones", async () => {
  const nc = await connect({ servers: nats.url });
  try {
    await ensureRunEventStream(nc, { prefix: "limits", retention: { maxAgeMs: 60_000, maxBytes: 1_000_000 } });
    await ensureRunEventStream(nc, { prefix: "limits", retention: { maxAgeMs: 120_000, maxBytes: 2_000_000 } });
    const info = await (await jetstreamManager(nc)).streams.info(runEventStreamNames({ prefix: "limits" })[0]!.stream);
    expect([info.config.max_age, info.config.max_bytes]).toEqual([120_000 * 1_000_000, 2_000_000]);
  } finally {
    await nc.close();
  }
});

it("keeps each run's events in its partition's stream only, next to the one-stream layout without overlap", async () => {
  const nc = await connect({ servers: nats.url });
  const prefix = "split";
  const retention = { maxAgeMs: 60_000, maxBytes: 4_000_000 };
  try {
    // A deployment that had one stream and goes to four: both layouts' streams are created side by side.
    await ensureRunEventStream(nc, { prefix, retention });
    await ensureRunEventStream(nc, { prefix, partitions: 4, retention });
    const subjects = createSubjects(prefix, { runEventPartitions: 4 });
    const bus = new NatsBus(nc);
    const runs = Array.from({ length: 24 }, (_, i) => `run-${i}`);
    for (const runId of runs) {
      const m = agentEventMessage(subjects, { runId, sessionKey: "k:1", edgeId: "e1" }, { runId, stream: "lifecycle", data: {} }, 1);
      bus.publish(m.subject, m.data);
    }
    await nc.flush();
    const jsm = await jetstreamManager(nc);
    const streams = runEventStreamNames({ prefix, partitions: 4 });
    const stored = await Promise.all(streams.map(async (s) => (await jsm.streams.info(s.stream)).state.messages));
    const expected = streams.map((_, p) => runs.filter((runId) => subjects.runEventPartition(runId) === p).length);
    expect(stored).toEqual(expected);
    expect(stored.filter((n) => n > 0).length).toBeGreaterThan(1);
    expect((await jsm.streams.info(runEventStreamNames({ prefix })[0]!.stream)).state.messages).toBe(0);
    // Each stream keeps a quarter of the bytes: retention is what the log keeps in all.
    expect((await jsm.streams.info(streams[0]!.stream)).config.max_bytes).toBe(1_000_000);
    const log = new JetStreamRunEventLog(nc, { prefix, partitions: 4 });
    expect((await Promise.all(runs.map((runId) => log.read(runId)))).map((events) => events.length)).toEqual(runs.map(() => 1));
  } finally {
    await nc.close();
  }
});
