import { runMain, startHost } from "@gw/host";
import { JetStreamRunQueue, RunRegistry, registryOptionsFor } from "@gw/runs";
import { startRunner } from "./runner.js";

runMain("agent-runner", async () => {
  const host = await startHost({
    service: "agent-runner",
    argv: process.argv.slice(2),
    env: process.env,
    needs: { fastStore: true },
  });
  const { config } = host;
  const runner = startRunner({
    config,
    bus: host.bus,
    subjects: host.subjects,
    queue: new JetStreamRunQueue(host.nc, { prefix: config.nats.subjectPrefix }),
    registry: new RunRegistry(host.fastStore, registryOptionsFor(config.runner)),
    logger: host.logger,
    metrics: host.metrics,
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
