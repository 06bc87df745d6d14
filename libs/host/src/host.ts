import { type Bus, connectNats, createSubjects, NatsBus, type Subjects, traceLogFields } from "@gw/bus";
import {
  collectSecrets,
  type ConfigReader,
  type ConfigSection,
  defaultConfig,
  type GatewayConfig,
  loadConfigFile,
} from "@gw/config";
import { GATEWAY_VERSION } from "@gw/contracts";
import {
  createLogger,
  createMetrics,
  guardProcess,
  type Logger,
  type Metrics,
  Shutdown,
  startHealthServer,
  startMetricsServer,
} from "@gw/runtime";
import { createRedisFastStore, type FastStore } from "@gw/store";
import type { NatsConnection } from "@nats-io/nats-core";
import { type CommonArgs, parseCommonArgs } from "./args.js";
import { busErrorSink, busObserver, redisErrorSink, watchNatsStatus } from "./observability.js";
import { startTracing } from "./tracing.js";

export interface HostOptions {
  service: string;
  argv: string[];
  env: Record<string, string | undefined>;
  /**
   * Every config section the service reads, the host's own included (gateway, nats, ops, and
   * redis with a FastStore). `${NAME}` is substituted, and must be set, only in these; the
   * others' values that name a variable are left out of `config` (ConfigReader).
   */
  reads: readonly ConfigSection[];
  /**
   * Connections beyond NATS. Durable state is each owner's: the sessions service opens its
   * JetStream repository on `nc` itself.
   */
  needs: {
    fastStore?: boolean;
    /** Redis commands of one event-loop turn in one write (RedisConnectOptions.coalesceWrites). */
    coalesceRedisWrites?: boolean;
  };
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

/** A service's logger: its level and secrets from the config, and the current request id on every line. */
export function serviceLogger(service: string, config: GatewayConfig): Logger {
  return createLogger({ service, level: config.ops.logLevel, secrets: collectSecrets(config), mixin: traceLogFields });
}

/** The config file from `--config` or GATEWAY_CONFIG (else the defaults), as `reader` sees it; without one, whole. */
export function loadServiceConfig(
  args: CommonArgs,
  env: Record<string, string | undefined>,
  reader?: ConfigReader,
): GatewayConfig {
  const path = args.config ?? env.GATEWAY_CONFIG;
  return path ? loadConfigFile(path, { env, reader }) : defaultConfig();
}

/**
 * The service's view of the config as `reads` declares it. Refuses a list without what the host
 * itself reads: where its listeners bind (gateway), NATS, ops, and Redis for a FastStore.
 */
export function serviceConfigReader(opts: Pick<HostOptions, "service" | "reads" | "needs">): ConfigReader {
  const own: ConfigSection[] = opts.needs.fastStore ? ["gateway", "nats", "ops", "redis"] : ["gateway", "nats", "ops"];
  const missing = own.filter((section) => !opts.reads.includes(section));
  if (missing.length > 0) throw new Error(`${opts.service}: reads must list ${missing.join(", ")}, which the host reads`);
  return { service: opts.service, sections: opts.reads };
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
  const config = loadServiceConfig(args, opts.env, serviceConfigReader(opts));
  const logger = serviceLogger(opts.service, config);
  const shutdown = new Shutdown({ logger, timeoutMs: config.ops.shutdownTimeoutMs });
  shutdown.onSignals();
  const metrics = createMetrics({ service: opts.service });
  // A distributed replica has a supervisor and peers: after an uncaught exception it drains and
  // exits to be replaced (docs/decisions.md, "Process faults").
  guardProcess({ logger, metrics, onUncaughtException: "exit", shutdown: (reason, code) => shutdown.run(reason, code) });
  // Closed last: spans recorded while the service drains still leave.
  const stopTracing = await startTracing({ config, logger, metrics, version: GATEWAY_VERSION });
  if (stopTracing !== undefined) shutdown.add("tracing", stopTracing);

  const nc = await connectNats({ url: config.nats.url, name: opts.service });
  const bus = new NatsBus(nc, busErrorSink(logger, metrics), busObserver(metrics, logger));
  watchNatsStatus(nc, logger, metrics).catch((err: unknown) => logger.error({ err }, "NATS status watch ended"));
  shutdown.add("nats", () => bus.close());
  logger.info({ url: config.nats.url }, "connected to NATS");

  let fastStore: FastStore | undefined;
  if (opts.needs.fastStore) {
    fastStore = await createRedisFastStore({
      url: config.redis.url,
      nodes: config.redis.nodes,
      keyPrefix: config.redis.keyPrefix,
      onError: redisErrorSink(logger, metrics),
      coalesceWrites: opts.needs.coalesceRedisWrites === true,
    });
    const store = fastStore;
    shutdown.add("redis", () => store.close());
    const where = config.redis.nodes.length > 0 ? { nodes: config.redis.nodes } : { url: config.redis.url };
    logger.info(where, "connected to Redis");
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
    subjects: createSubjects(config.nats.subjectPrefix, { runEventPartitions: config.nats.runEventPartitions }),
    ...(fastStore ? { fastStore } : {}),
    isHealthy,
  };
}

/**
 * Where the health and metrics listeners bind: `ops.bind`, else where the process's own listener
 * binds (`--bind`, else `gateway.bind`). Never every interface unless the config says so.
 */
export function opsBindAddress(config: GatewayConfig, args: CommonArgs): string {
  return config.ops.bind ?? args.bind ?? config.gateway.bind;
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
  const host = opsBindAddress(config, args);
  const healthPort = args.healthPort ?? config.ops.healthPort;
  if (healthPort !== undefined) {
    const health = await startHealthServer({
      port: healthPort,
      host,
      service: deps.service,
      probe: deps.probe,
      logger,
    });
    shutdown.add("health", () => health.close());
    logger.info({ host, port: health.port }, "gRPC health listening");
  }
  const metricsPort = args.metricsPort ?? config.ops.metricsPort;
  if (metricsPort !== undefined) {
    const server = await startMetricsServer({ port: metricsPort, host, registry: deps.metrics.registry });
    shutdown.add("metrics", () => server.close());
    logger.info({ host, port: server.port }, "metrics listening");
  }
}

/** Runs a main, turning a start-up failure into one clear line and exit code 1. */
export function runMain(service: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${service}: failed to start: ${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  });
}
