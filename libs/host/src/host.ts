import { type Bus, connectNats, createSubjects, NatsBus, type Subjects } from "@gw/bus";
import { collectSecrets, defaultConfig, type GatewayConfig, loadConfigFile } from "@gw/config";
import {
  createLogger,
  createMetrics,
  type Logger,
  type Metrics,
  Shutdown,
  startHealthServer,
  startEventLoopMonitor,
  startMetricsServer,
} from "@gw/runtime";
import { createRedisFastStore, type FastStore } from "@gw/store";
import type { NatsConnection } from "@nats-io/nats-core";
import { type CommonArgs, parseCommonArgs } from "./args.js";

export interface HostOptions {
  service: string;
  argv: string[];
  env: Record<string, string | undefined>;
  /**
   * Connections beyond NATS. Durable state is each owner's: the sessions service opens its
   * JetStream repository on `nc` itself.
   */
  needs: { fastStore?: boolean };
}

/** A distributed-mode service's connections and lifecycle, built by its main.ts. */
export interface ServiceHost {
  config: GatewayConfig;
  args: CommonArgs;
  logger: Logger;
  shutdown: Shutdown;
  metrics: Metrics;
  bus: Bus;
  /** The process's one NATS connection, for JetStream users (stores, the run queue). */
  nc: NatsConnection;
  subjects: Subjects;
  /** Bus and stores connected, and not draining. */
  isHealthy(): boolean;
}

export function loadServiceConfig(args: CommonArgs, env: Record<string, string | undefined>): GatewayConfig {
  const path = args.config ?? env.GATEWAY_CONFIG;
  return path ? loadConfigFile(path, { env }) : defaultConfig();
}

/** A host that connected the FastStore (Redis), as `needs: { fastStore: true }` asked. */
export interface ServiceHostWithFastStore extends ServiceHost {
  fastStore: FastStore;
}

/**
 * Loads config, then connects NATS (and Redis when the service needs it), serves gRPC health
 * and metrics when configured, and registers every close with the graceful shutdown, last
 * connected first closed.
 */
export function startHost(opts: HostOptions & { needs: { fastStore: true } }): Promise<ServiceHostWithFastStore>;
export function startHost(opts: HostOptions): Promise<ServiceHost>;
export async function startHost(opts: HostOptions): Promise<ServiceHost & { fastStore?: FastStore }> {
  const args = parseCommonArgs(opts.argv);
  const config = loadServiceConfig(args, opts.env);
  const logger = createLogger({
    service: opts.service,
    level: config.ops.logLevel,
    secrets: collectSecrets(config),
  });
  const shutdown = new Shutdown({ logger, timeoutMs: config.ops.shutdownTimeoutMs });
  shutdown.onSignals();
  const metrics = createMetrics({ service: opts.service });

  const nc = await connectNats({ url: config.nats.url, name: opts.service });
  const bus = new NatsBus(nc, (err, subject) => logger.error({ err, subject }, "bus handler failed"));
  shutdown.add("nats", () => bus.close());
  logger.info({ url: config.nats.url }, "connected to NATS");

  let fastStore: FastStore | undefined;
  if (opts.needs.fastStore) {
    fastStore = await createRedisFastStore({ url: config.redis.url, keyPrefix: config.redis.keyPrefix });
    const store = fastStore;
    shutdown.add("redis", () => store.close());
    logger.info({ url: config.redis.url }, "connected to Redis");
  }
  const isHealthy = () => !shutdown.draining && bus.isHealthy() && (fastStore?.isHealthy() ?? true);

  await startOpsServers({ service: opts.service, config, args, logger, shutdown, metrics, probe: isHealthy });

  return {
    config,
    args,
    logger,
    shutdown,
    metrics,
    bus,
    nc,
    subjects: createSubjects(config.nats.subjectPrefix),
    ...(fastStore ? { fastStore } : {}),
    isHealthy,
  };
}

/** Serves gRPC health and Prometheus metrics when their ports are configured (flag or `ops.*`). */
export async function startOpsServers(deps: {
  service: string;
  config: GatewayConfig;
  args: CommonArgs;
  logger: Logger;
  shutdown: Shutdown;
  metrics: Metrics;
  probe: () => boolean;
}): Promise<void> {
  const { args, config, logger, shutdown } = deps;
  const healthPort = args.healthPort ?? config.ops.healthPort;
  if (healthPort !== undefined) {
    const health = await startHealthServer({
      port: healthPort,
      host: "0.0.0.0",
      service: deps.service,
      probe: deps.probe,
      logger,
    });
    shutdown.add("health", () => health.close());
    logger.info({ port: health.port }, "gRPC health listening");
  }
  const metricsPort = args.metricsPort ?? config.ops.metricsPort;
  if (metricsPort !== undefined) {
    // Event-loop delay is what every socket on this process feels: export it with the rest.
    const loop = startEventLoopMonitor(deps.metrics, { resolutionMs: 10 });
    shutdown.add("event-loop monitor", () => loop.stop());
    const server = await startMetricsServer({ port: metricsPort, registry: deps.metrics.registry });
    shutdown.add("metrics", () => server.close());
    logger.info({ port: server.port }, "metrics listening");
  }
}

/** Runs a main, turning a start-up failure into one clear line and exit code 1. */
export function runMain(service: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${service}: failed to start: ${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  });
}
