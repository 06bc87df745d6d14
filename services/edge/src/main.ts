import { randomUUID } from "node:crypto";
import { GATEWAY_VERSION } from "@gw/contracts";
import { runMain, startHost } from "@gw/host";
import {
  ensureRunEventStream,
  JetStreamRunEventLog,
  JetStreamRunQueue,
  RunRegistry,
  registryOptionsFor,
  retentionFor,
} from "@gw/runs";
import { createJetStreamDurableStore } from "@gw/store";
import { EDGE_CONFIG_READS } from "./config-reads.js";
import { startEdge } from "./edge.js";

runMain("edge", async () => {
  const host = await startHost({
    service: "edge",
    argv: process.argv.slice(2),
    env: process.env,
    reads: EDGE_CONFIG_READS,
    needs: { fastStore: true },
  });
  const { config } = host;
  // Paired devices and their hashed tokens: JetStream KV on the process's NATS connection.
  const durable = createJetStreamDurableStore(host.nc, { replicas: host.config.nats.replicas });
  host.shutdown.add("jetstream", () => durable.close());
  // Runs' kept events, for clients that resume a run here (agent.subscribe with afterSeq).
  const log = { prefix: config.nats.subjectPrefix, partitions: config.nats.runEventPartitions };
  await ensureRunEventStream(host.nc, { ...log, retention: retentionFor(config.runner), replicas: config.nats.replicas });
  const edge = await startEdge(
    {
      config,
      bus: host.bus,
      subjects: host.subjects,
      fastStore: host.fastStore,
      durable,
      runs: {
        queue: JetStreamRunQueue.forConfig(host.nc, config.nats),
        registry: new RunRegistry(host.fastStore, registryOptionsFor(config.runner)),
        events: new JetStreamRunEventLog(host.nc, log),
      },
      logger: host.logger,
      metrics: host.metrics,
      edgeId: process.env.EDGE_ID ?? randomUUID().slice(0, 8),
      version: GATEWAY_VERSION,
      isHealthy: () => host.isHealthy() && durable.isHealthy(),
    },
    { host: host.args.bind ?? config.gateway.bind, port: host.args.port ?? config.gateway.port },
  );
  host.shutdown.add("edge", () => edge.close());
});
