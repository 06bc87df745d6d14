import { randomUUID } from "node:crypto";
import { GATEWAY_VERSION } from "@gw/contracts";
import { runMain, startHost } from "@gw/host";
import { JetStreamRunQueue, RunRegistry, registryOptionsFor } from "@gw/runs";
import { startEdge } from "./edge.js";

runMain("edge", async () => {
  const host = await startHost({
    service: "edge",
    argv: process.argv.slice(2),
    env: process.env,
    needs: { fastStore: true },
  });
  const { config } = host;
  const edge = await startEdge(
    {
      config,
      bus: host.bus,
      subjects: host.subjects,
      fastStore: host.fastStore,
      runs: {
        queue: new JetStreamRunQueue(host.nc, { prefix: config.nats.subjectPrefix }),
        registry: new RunRegistry(host.fastStore, registryOptionsFor(config.runner)),
      },
      logger: host.logger,
      metrics: host.metrics,
      edgeId: process.env.EDGE_ID ?? randomUUID().slice(0, 8),
      version: GATEWAY_VERSION,
      isHealthy: host.isHealthy,
    },
    { host: host.args.bind ?? config.gateway.bind, port: host.args.port ?? config.gateway.port },
  );
  host.shutdown.add("edge", () => edge.close());
});
