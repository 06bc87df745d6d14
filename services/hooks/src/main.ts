import { runMain, startHost } from "@gw/host";
import { JetStreamRunQueue, RunRegistry, registryOptionsFor } from "@gw/runs";
import { createJetStreamDurableStore } from "@gw/store";
import { HOOKS_CONFIG_READS } from "./config-reads.js";
import { startHooksService } from "./service.js";

runMain("hooks", async () => {
  const host = await startHost({
    service: "hooks",
    argv: process.argv.slice(2),
    env: process.env,
    reads: HOOKS_CONFIG_READS,
    needs: { fastStore: true },
  });
  const { config } = host;
  if (!config.hooks.enabled) host.logger.warn("hooks.enabled is false: no edge sends hooks here, only the heartbeat runs");
  // Wake texts, deferred runs and the heartbeat's turn slot: JetStream KV on the process's NATS connection.
  const durable = createJetStreamDurableStore(host.nc, { replicas: host.config.nats.replicas });
  host.shutdown.add("jetstream", () => durable.close());
  const queue = JetStreamRunQueue.forConfig(host.nc, config.nats);
  host.shutdown.add("run-queue", () => queue.close());
  const service = await startHooksService({
    config,
    bus: host.bus,
    subjects: host.subjects,
    fastStore: host.fastStore,
    durable,
    runs: { queue, registry: new RunRegistry(host.fastStore, registryOptionsFor(config.runner)) },
    logger: host.logger,
    replicaId: process.env.HOOKS_REPLICA_ID,
  });
  // Registered last, so it runs first on shutdown: no heartbeat is half-started when NATS closes.
  host.shutdown.add("hooks", () => service.stop());
});
