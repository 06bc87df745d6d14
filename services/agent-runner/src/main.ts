import { runMain, startHost } from "@gw/host";
import { ensureRunEventStream, JetStreamRunQueue, RunRegistry, registryOptionsFor, retentionFor } from "@gw/runs";
import { RUNNER_CONFIG_READS } from "./config-reads.js";
import { startRunner } from "./runner.js";

runMain("agent-runner", async () => {
  const host = await startHost({
    service: "agent-runner",
    argv: process.argv.slice(2),
    env: process.env,
    reads: RUNNER_CONFIG_READS,
    needs: { fastStore: true },
  });
  const { config } = host;
  // The stream that keeps runs' events exists before the first run publishes one.
  await ensureRunEventStream(host.nc, {
    prefix: config.nats.subjectPrefix,
    partitions: config.nats.runEventPartitions,
    retention: retentionFor(config.runner),
    replicas: config.nats.replicas,
  });
  const runner = startRunner({
    config,
    bus: host.bus,
    subjects: host.subjects,
    queue: JetStreamRunQueue.forConfig(host.nc, config.nats),
    registry: new RunRegistry(host.fastStore, registryOptionsFor(config.runner)),
    logger: host.logger,
    metrics: host.metrics,
    fastStore: host.fastStore,
    runnerId: process.env.RUNNER_ID,
  });
  // Registered after the connections, so it runs first on shutdown: runs finish before NATS closes.
  host.shutdown.add("runner", () => runner.stop());
  host.logger.info(
    {
      runnerId: runner.runnerId,
      maxConcurrentRuns: config.runner.maxConcurrentRuns,
      agents: config.agents.list.map((a) => `${a.id}=${a.model}`),
    },
    "agent-runner serving",
  );
});
