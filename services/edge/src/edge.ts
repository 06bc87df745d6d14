import type { Bus, Subjects } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import type { Logger, Metrics } from "@gw/runtime";
import type { RunEventLog, RunQueue, RunRegistry } from "@gw/runs";
import type { DurableStore, FastStore } from "@gw/store";
import { edgeAuth } from "./auth/edge-auth.js";
import type { BusDeps } from "./bus-deps.js";
import { startDeviceServices } from "./devices/device-services.js";
import { EventHub } from "./events/event-hub.js";
import { RunEventRouter } from "./events/run-event-router.js";
import { Drain } from "./drain.js";
import { edgeMetrics } from "./edge-metrics.js";
import { createHttpServer } from "./http/http-server.js";
import { StoredResponses } from "./http/openai/stored-responses.js";
import { registerHttpSurfaces } from "./http/surfaces.js";
import { edgeMethods } from "./methods/edge-methods.js";
import { textOnlyModels } from "./runs/image-input.js";
import { RunClient } from "./runs/run-client.js";
import { EdgePresence } from "./status/edge-presence.js";
import type { Connection } from "./ws/connection.js";
import { listenForUpgrades } from "./ws/ws-surface.js";

export interface EdgeDeps {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  fastStore: FastStore;
  /** Paired devices and their hashed tokens (JetStream KV, or the embedded gateway's files). */
  durable: DurableStore;
  /**
   * Run dispatch, the shared run registry and the runs' kept events: JetStream + Redis, or in
   * process (shared with the runner).
   */
  runs: { queue: RunQueue; registry: RunRegistry; events: RunEventLog };
  logger: Logger;
  metrics: Metrics;
  edgeId: string;
  version: string;
  /** Whether every dependency (bus, stores) is connected. */
  isHealthy: () => boolean;
}

export interface Edge {
  port: number;
  connectionCount(): number;
  close(): Promise<void>;
}

/** Of ops.shutdownTimeoutMs, what the drain leaves for closing sockets and the connections behind them. */
const CLOSE_RESERVE_MS = 2_000;
/** How long answers written after a cut-off get to leave before the sockets close. */
const FLUSH_MS = 500;
/** Connections the kernel may hold for the edge before it accepts them (capped by net.core.somaxconn). */
const ACCEPT_BACKLOG = 4096;

/**
 * The drain (SIGTERM): refuse new work and tell every client (the `shutdown` event), let runs
 * and streams in flight finish whole until the deadline, cut off what is left (an error naming
 * its run, an SSE error event), then close every socket with 1012 (service restart). Only then
 * do run events stop: unsubscribing earlier ended streams with part of their answer.
 */
async function drainAndClose(d: {
  drain: Drain;
  connections: Set<Connection>;
  runs: RunClient;
  logger: Logger;
  deadline: number;
  closeRest: () => Promise<void>;
}): Promise<void> {
  d.drain.begin();
  for (const conn of d.connections) conn.notifyShutdown(d.drain.notice(d.deadline));
  d.logger.info({ connections: d.connections.size, inFlight: d.drain.inFlight }, "draining");
  const finished = await d.drain.idle(d.deadline);
  if (!finished) {
    d.logger.warn({ inFlight: d.drain.inFlight }, "drain deadline passed: cutting off the requests still waiting");
    d.runs.stopWaiting();
    await d.drain.idle(Date.now() + FLUSH_MS);
  }
  for (const conn of d.connections) conn.close(1012, "service restart");
  await d.closeRest();
}

/**
 * The edge: fastify (HTTP) and ws (WebSocket) on one port; everything else is behind the bus.
 * Here the parts are made and wired; each surface is built in its own module (http/surfaces.ts,
 * ws/ws-surface.ts) from them.
 */
export async function startEdge(deps: EdgeDeps, listen: { host: string; port: number }): Promise<Edge> {
  const { config, logger } = deps;
  const limits = config.gateway.limits;
  const connections = new Set<Connection>();
  const drain = new Drain();
  const observed = edgeMetrics(deps.metrics, logger, () => connections);
  const devices = await startDeviceServices({ ...deps, logger });
  const auth = edgeAuth({ ...deps, gateway: config.gateway, devices: devices.registry, watcher: observed.auth });
  const bus: BusDeps = { bus: deps.bus, subjects: deps.subjects, requestTimeoutMs: limits.requestTimeoutMs };
  // Delivery answers within delivery.sendTimeoutMs (it fails the send itself then); the extra
  // second covers the bus hops, so the edge never times out a send that delivery finishes.
  const sendTimeoutMs = config.delivery.sendTimeoutMs + 1_000;
  const events = new EventHub({ bus: deps.bus, subjects: deps.subjects, logger });
  const runEvents = new RunEventRouter({ bus: deps.bus, subjects: deps.subjects, hub: events, logger, edgeId: deps.edgeId });
  const runs = new RunClient({
    ...bus,
    ...deps.runs,
    router: runEvents,
    edgeId: deps.edgeId,
    logger,
    defaultTimeoutSeconds: config.runner.defaultTimeoutSeconds,
  });
  const presence = new EdgePresence({
    store: deps.fastStore,
    edgeId: deps.edgeId,
    version: deps.version,
    logger,
    connections: () => connections.size,
    draining: () => drain.draining,
  });
  const registry = edgeMethods({ ...deps, bus, runs, runStore: deps.runs, events, runEvents, devices, presence, sendTimeoutMs });

  const app = createHttpServer({ limits, logger, metrics: deps.metrics, accessLog: config.ops.accessLog, drain, origins: auth.origins });
  const http = { ...bus, ...auth, isHealthy: () => !drain.draining && deps.isHealthy() };
  const responses = new StoredResponses(await deps.durable.kv("openai-responses"));
  const openai = { runs, logger, agentIds: config.agents.list.map((a) => a.id), textOnlyModel: textOnlyModels(config), responses };
  registerHttpSurfaces(app, { http, config, limiter: auth.limiter, openai, sendTimeoutMs });
  const wss = listenForUpgrades(app.server, {
    ...auth,
    connections,
    registry,
    drain,
    logger,
    metrics: deps.metrics,
    events,
    devices,
    limits,
    server: { version: deps.version, edgeId: deps.edgeId },
    eventsDelivered: observed.eventsDelivered,
    accessLog: config.ops.accessLog,
  });

  // A burst of connections waits in the kernel's accept queue while the loop is busy: Node's
  // 511 overflowed at 2,048 simultaneous streams and reset some (Linux caps this at somaxconn).
  await app.listen({ host: listen.host, port: listen.port, backlog: ACCEPT_BACKLOG });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : listen.port;
  logger.info({ host: listen.host, port, edgeId: deps.edgeId }, "edge listening");
  presence.start();

  return {
    port,
    connectionCount: () => connections.size,
    close: () =>
      drainAndClose({
        drain,
        connections,
        runs,
        logger,
        deadline: Date.now() + Math.max(0, config.ops.shutdownTimeoutMs - CLOSE_RESERVE_MS),
        closeRest: async () => {
          wss.close();
          events.close();
          auth.limiter.close();
          devices.close();
          runEvents.close();
          await presence.stop();
          await app.close();
        },
      }),
  };
}
