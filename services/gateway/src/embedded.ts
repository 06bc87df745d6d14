import { randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import { startRunner } from "@gw/agent-runner";
import { createSubjects, InProcessBus } from "@gw/bus";
import { CHANNEL_PLUGINS, HttpClients, startDeliveryService } from "@gw/delivery";
import { collectSecrets, type GatewayConfig } from "@gw/config";
import { GATEWAY_VERSION } from "@gw/contracts";
import { busErrorSink, busObserver, startTracing } from "@gw/host";
import { type Edge, startEdge } from "@gw/edge";
import { type HooksService, startHooksService } from "@gw/hooks";
import type { Logger, Metrics } from "@gw/runtime";
import { InProcessRunEventLog, InProcessRunQueue, RunRegistry, registryOptionsFor, retentionFor } from "@gw/runs";
import { FileSessionRepository, startSessionsService } from "@gw/sessions";
import { createFileDurableStore, createMemoryFastStore } from "@gw/store";

export interface EmbeddedGateway {
  edge: Edge;
  isHealthy(): boolean;
  close(): Promise<void>;
}

/**
 * Every service in one process: the in-process bus, the in-memory FastStore and the
 * sessions' files under gateway.dataDir. Same services, same code paths as the
 * distributed mode; only the adapters differ.
 */
export async function startEmbedded(deps: {
  config: GatewayConfig;
  logger: Logger;
  metrics: Metrics;
  listen: { host: string; port: number };
}): Promise<EmbeddedGateway> {
  const { config, logger } = deps;
  // Every in-process service records its spans under its own service name, through one exporter.
  const stopTracing = await startTracing({ config, logger, metrics: deps.metrics, version: GATEWAY_VERSION });
  const bus = new InProcessBus(busErrorSink(logger, deps.metrics), busObserver(deps.metrics, logger));
  const subjects = createSubjects(config.nats.subjectPrefix, { runEventPartitions: config.nats.runEventPartitions });
  const fastStore = createMemoryFastStore();
  const runQueue = new InProcessRunQueue();
  const runRegistry = new RunRegistry(fastStore, registryOptionsFor(config.runner));
  // Made before the runner, so it keeps every run's events from the first.
  const runEvents = new InProcessRunEventLog({ bus, subjects }, retentionFor(config.runner));
  const runner = startRunner({ config, bus, subjects, queue: runQueue, registry: runRegistry, logger, metrics: deps.metrics, fastStore });
  const sessionStore = await openSessionStore(join(resolve(config.gateway.dataDir), "sessions"), logger);
  const sessions = startSessionsService({ config, bus, subjects, repo: sessionStore, logger });
  const durable = await createFileDurableStore(join(resolve(config.gateway.dataDir), "durable"));
  const http = new HttpClients(collectSecrets(config));
  const delivery = await startDeliveryService({
    config,
    bus,
    subjects,
    fastStore,
    durable,
    plugins: CHANNEL_PLUGINS,
    runs: { queue: runQueue, registry: runRegistry },
    http: http.factory,
    logger,
    metrics: deps.metrics,
  });
  // Always: besides the /hooks endpoints (hooks.enabled) it runs the scheduled runs (cron).
  const hooks: HooksService = await startHooksService({
    config,
    bus,
    subjects,
    fastStore,
    durable,
    runs: { queue: runQueue, registry: runRegistry },
    logger,
  });
  const isHealthy = () =>
    bus.isHealthy() && fastStore.isHealthy() && sessionStore.isHealthy() && durable.isHealthy();
  const edge = await startEdge(
    {
      config,
      bus,
      subjects,
      fastStore,
      // One file store for the process: the delivery outbox and the paired devices share it.
      durable,
      runs: { queue: runQueue, registry: runRegistry, events: runEvents },
      logger,
      metrics: deps.metrics,
      edgeId: `embedded-${randomUUID().slice(0, 8)}`,
      version: GATEWAY_VERSION,
      isHealthy,
    },
    deps.listen,
  );
  return {
    edge,
    isHealthy,
    close: async () => {
      await edge.close();
      await hooks.stop();
      await runner.stop();
      await delivery.stop();
      await http.close();
      sessions.stop();
      await runQueue.close();
      await runEvents.close();
      await bus.close();
      await sessionStore.close();
      await durable.close();
      await fastStore.close();
      await stopTracing?.();
    },
  };
}

/** The embedded session store, saying how it started: a clean stop's snapshot, or every file (slow at scale). */
function openSessionStore(dir: string, logger: Logger): Promise<FileSessionRepository> {
  return FileSessionRepository.open(dir, {
    onCorruptMeta: (file, problem) => logger.error({ file, problem }, "a session metadata file does not decode; that session is not loaded"),
    onLoaded: (load) => logger.info(load, `sessions loaded from ${load.from === "snapshot" ? "the clean stop's snapshot" : "their files"}`),
  });
}
