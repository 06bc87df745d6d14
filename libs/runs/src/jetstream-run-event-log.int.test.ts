import { createSubjects, NatsBus } from "@gw/bus";
import { type NatsServerHandle, startNats } from "@gw/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
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

describeRunEventLogContract("jetstream", async (retention) => {
  const prefix = `t${++counter}${Math.random().toString(36).slice(2, 6)}`;
  // The reader and the publisher on separate connections, as an edge and a runner.
  const [reader, publisher] = await Promise.all([connect({ servers: nats.url }), connect({ servers: nats.url })]);
  await ensureRunEventStream(publisher, { prefix, retention });
  const bus = new NatsBus(publisher);
  return {
    log: new JetStreamRunEventLog(reader, { prefix }),
    bus,
    subjects: createSubjects(prefix),
    elapse: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    dispose: async () => {
      const jsm = await jetstreamManager(reader);
      await jsm.streams.delete(runEventStreamNames(prefix).stream).catch(() => undefined);
      await Promise.all([reader.close(), publisher.close()]);
    },
  };
});

it("brings an existing stream's limits to the configured ones", async () => {
  const nc = await connect({ servers: nats.url });
  try {
    await ensureRunEventStream(nc, { prefix: "limits", retention: { maxAgeMs: 60_000, maxBytes: 1_000_000 } });
    await ensureRunEventStream(nc, { prefix: "limits", retention: { maxAgeMs: 120_000, maxBytes: 2_000_000 } });
    const info = await (await jetstreamManager(nc)).streams.info(runEventStreamNames("limits").stream);
    expect([info.config.max_age, info.config.max_bytes]).toEqual([120_000 * 1_000_000, 2_000_000]);
  } finally {
    await nc.close();
  }
});
