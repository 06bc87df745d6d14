import { randomUUID } from "node:crypto";
import { GATEWAY_VERSION } from "@gw/contracts";
import { runMain, startHost } from "@gw/host";
import { JetStreamRunQueue, RunRegistry, registryOptionsFor } from "@gw/runs";
import { createJetStreamDurableStore } from "@gw/store";
import { startEdge } from "./edge.js";

runMain("edge", async () => {
  const host = await startHost({
    service: "edge",
    argv: process.argv.slice(2),
    env: process.env,
    needs: { fastStore: true },
  });
  const { config } = host;
  // Paired devices and their hashed tokens: JetStream KV on the process's NATS connection.
  const durable = createJetStreamDurableStore(host.nc);
  host.shutdown.add("jetstream", () => durable.close());
  const edge = await startEdge(
    {
      config,
      bus: host.bus,
      subjects: host.subjects,
      fastStore: host.fastStore,
      durable,
      runs: {
        queue: new JetStreamRunQueue(host.nc, { prefix: config.nats.subjectPrefix }),
        registry: new RunRegistry(host.fastStore, registryOptionsFor(config.runner)),
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
