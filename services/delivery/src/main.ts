import { collectSecrets } from "@gw/config";
import { runMain, startHost } from "@gw/host";
import { JetStreamRunQueue, RunRegistry, registryOptionsFor } from "@gw/runs";
import { createJetStreamDurableStore } from "@gw/store";
import { CHANNEL_PLUGINS } from "./channels/index.js";
import { DELIVERY_CONFIG_READS } from "./config-reads.js";
import { HttpClients } from "./http-clients.js";
import { startDeliveryService } from "./service.js";

runMain("delivery", async () => {
  const host = await startHost({
    service: "delivery",
    argv: process.argv.slice(2),
    env: process.env,
    reads: DELIVERY_CONFIG_READS,
    // Every Redis write on delivery's paths is awaited before anything that depends on it, so
    // its commands may leave at the end of the turn that issued them (docs/decisions.md).
    needs: { fastStore: true, coalesceRedisWrites: true },
  });
  // The outbox is delivery's own durable state, on the process's NATS connection (JetStream KV).
  const durable = createJetStreamDurableStore(host.nc, { replicas: host.config.nats.replicas });
  host.shutdown.add("jetstream", () => durable.close());
  const http = new HttpClients(collectSecrets(host.config));
  host.shutdown.add("http-clients", () => http.close());
  const service = await startDeliveryService({
    config: host.config,
    bus: host.bus,
    subjects: host.subjects,
    fastStore: host.fastStore,
    durable,
    plugins: CHANNEL_PLUGINS,
    runs: {
      queue: JetStreamRunQueue.forConfig(host.nc, host.config.nats),
      registry: new RunRegistry(host.fastStore, registryOptionsFor(host.config.runner)),
    },
    http: http.factory,
    logger: host.logger,
    metrics: host.metrics,
  });
  host.shutdown.add("delivery", () => service.stop());
});
