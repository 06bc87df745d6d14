import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Bus, Subjects } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import { GatewayError, isGatewayError } from "@gw/contracts";
import type { Logger, Metrics } from "@gw/runtime";
import type { RunEventLog, RunQueue, RunRegistry } from "@gw/runs";
import type { DurableStore, FastStore } from "@gw/store";
import Fastify from "fastify";
import { WebSocketServer } from "ws";
import { AuthGate } from "./auth/auth-gate.js";
import { normalizeIp, requestTarget, TrustedProxies } from "./auth/client-address.js";
import { FailedAuthLimiter } from "./auth/failed-auth-limiter.js";
import { IdentityRoles } from "./auth/identity-roles.js";
import { OriginPolicy } from "./auth/origin-policy.js";
import type { BusDeps } from "./bus-deps.js";
import { startDeviceServices } from "./devices/device-services.js";
import { AgentSubscriptions } from "./events/agent-subscriptions.js";
import { EventHub } from "./events/event-hub.js";
import { RunEventRouter } from "./events/run-event-router.js";
import { Drain, registerHttpDrain } from "./drain.js";
import { edgeMetrics } from "./edge-metrics.js";
import { registerRequestTracing, requestIdFor } from "./http/access-log.js";
import { registerApiSend } from "./http/api-send.js";
import { registerOriginCheck } from "./http/browser-origin.js";
import { registerChannelIngress } from "./http/channel-ingress.js";
import { httpErrorResponse, sendHttpError } from "./http/errors.js";
import { registerHooks } from "./http/hooks.js";
import { registerDepthLimitedJson } from "./http/json-body.js";
import { openaiSurface } from "./http/openai/plugin.js";
import { StoredResponses } from "./http/openai/stored-responses.js";
import { registerRoutes } from "./http/routes.js";
import { registerToolsInvoke } from "./http/tools-invoke.js";
import { registerWebchat } from "./http/webchat/webchat.js";
import { agentRunMethods } from "./methods/agent-runs.js";
import { agentSubscribeMethods } from "./methods/agent-subscribe.js";
import { agentMethods } from "./methods/agents.js";
import { channelPairingMethods } from "./methods/channel-pairing.js";
import { cronMethods } from "./methods/cron.js";
import { deliveryMethods } from "./methods/delivery.js";
import { deviceMethods } from "./methods/devices.js";
import { pairingMethods } from "./methods/pairing.js";
import { operatorMethods } from "./methods/operator.js";
import { MethodRegistry } from "./methods/registry.js";
import { sessionMethods } from "./methods/sessions.js";
import { toolMethods } from "./methods/tools.js";
import { textOnlyModels } from "./runs/image-input.js";
import { RunClient } from "./runs/run-client.js";
import { EdgePresence } from "./status/edge-presence.js";
import { Connection, type ConnectionDeps, EdgeSocket, type UpgradeInfo } from "./ws/connection.js";
import { ConnectionsPerIp } from "./ws/limits.js";

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

const WS_PATHS = new Set(["/", "/ws"]);
/** Of ops.shutdownTimeoutMs, what the drain leaves for closing sockets and the connections behind them. */
const CLOSE_RESERVE_MS = 2_000;
/** How long answers written after a cut-off get to leave before the sockets close. */
const FLUSH_MS = 500;

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

/** Shared by every upgrade socket, so listening costs no closure per socket. */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

/** Answers a refused upgrade with a plain HTTP response from the one HTTP error mapper. */
function refuseUpgrade(socket: Duplex, err: GatewayError, logger: Logger): void {
  const { status, headers, body } = httpErrorResponse(err, logger);
  const json = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${body.error.type}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(json)}`,
    "Connection: close",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join("\r\n")}\r\n\r\n${json}`);
}

/** The edge: fastify (HTTP) and ws (WebSocket) on one port; everything else is behind the bus. */
export async function startEdge(deps: EdgeDeps, listen: { host: string; port: number }): Promise<Edge> {
  const { config, logger } = deps;
  const limits = config.gateway.limits;
  const trustedProxies = new TrustedProxies(config.gateway.trustedProxies);
  const origins = new OriginPolicy(config.gateway.allowedOrigins);
  const connections = new Set<Connection>();
  const drain = new Drain();
  const observed = edgeMetrics(deps.metrics, logger, () => connections);
  const limiter = new FailedAuthLimiter(
    deps.fastStore.counters,
    { max: limits.failedAuthMax, windowMs: limits.failedAuthWindowSeconds * 1000 },
    { bus: deps.bus, subjects: deps.subjects },
    observed.auth,
  );
  const devices = await startDeviceServices({ ...deps, logger });
  const authGate = new AuthGate(
    {
      token: config.gateway.auth.token,
      password: config.gateway.auth.password,
      allowLoopback: config.gateway.auth.allowLoopback,
      overlayMode: config.gateway.overlay.mode,
      trustedProxy: config.gateway.auth.trustedProxy,
      trustedProxies,
      pairingEnabled: config.gateway.pairing.enabled,
    },
    limiter,
    devices.registry,
  );
  const identityRoles = new IdentityRoles({ overlay: config.gateway.overlay, trustedProxy: config.gateway.auth.trustedProxy });
  const busDeps: BusDeps = { bus: deps.bus, subjects: deps.subjects, requestTimeoutMs: limits.requestTimeoutMs };
  // Delivery answers within delivery.sendTimeoutMs (it fails the send itself then); the extra
  // second covers the bus hops, so the edge never times out a send that delivery finishes.
  const sendTimeoutMs = config.delivery.sendTimeoutMs + 1_000;
  const events = new EventHub({ bus: deps.bus, subjects: deps.subjects, logger });
  const runEvents = new RunEventRouter({ bus: deps.bus, subjects: deps.subjects, hub: events, logger, edgeId: deps.edgeId });
  const runs = new RunClient({
    bus: deps.bus,
    subjects: deps.subjects,
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
  const registry = new MethodRegistry().register(
    ...agentMethods(busDeps),
    ...agentRunMethods(runs, logger, textOnlyModels(config)),
    ...agentSubscribeMethods(
      new AgentSubscriptions({ router: runEvents, hub: events, registry: deps.runs.registry, log: deps.runs.events, logger, maxPerConnection: limits.maxSubscriptionsPerConnection }),
    ),
    ...sessionMethods(busDeps),
    ...deliveryMethods({ ...busDeps, sendTimeoutMs }),
    ...pairingMethods(devices),
    ...deviceMethods(devices),
    ...channelPairingMethods(busDeps),
    ...cronMethods(busDeps),
    ...toolMethods(busDeps),
    ...operatorMethods({ ...busDeps, registry: deps.runs.registry, presence, edgeId: deps.edgeId, hooksEnabled: config.hooks.enabled }),
  );

  const app = Fastify({
    bodyLimit: limits.maxBodyBytes,
    logger: false,
    genReqId: requestIdFor,
    // Slowloris: the whole request (headers and body) must arrive within httpRequestTimeoutMs;
    // Node checks on an interval, so keep it short enough for the limit to mean something.
    requestTimeout: limits.httpRequestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, limits.httpRequestTimeoutMs),
      connectionsCheckingInterval: Math.min(1_000, limits.httpRequestTimeoutMs),
    },
  });
  registerRequestTracing(app, { logger, metrics: deps.metrics, accessLog: config.ops.accessLog });
  registerHttpDrain(app, drain);
  app.setErrorHandler((err, _request, reply) => sendHttpError(reply, err, logger));
  app.setNotFoundHandler((request, reply) =>
    sendHttpError(reply, new GatewayError("NOT_FOUND", `no route ${request.method} ${request.url}`), logger),
  );
  // Refuse a declared oversize body before routing, so unknown routes cannot be used to stream junk.
  app.addHook("onRequest", async (request) => {
    const declared = Number(request.headers["content-length"] ?? 0);
    if (declared > limits.maxBodyBytes) {
      throw new GatewayError("PAYLOAD_TOO_LARGE", `request body is larger than ${limits.maxBodyBytes} bytes`);
    }
  });
  registerOriginCheck(app, origins);
  registerDepthLimitedJson(app);
  const httpDeps = { ...busDeps, authGate, identityRoles, trustedProxies, isHealthy: () => !drain.draining && deps.isHealthy() };
  registerRoutes(app, httpDeps);
  registerWebchat(app);
  const responses = new StoredResponses(await deps.durable.kv("openai-responses"));
  void app.register(openaiSurface, { prefix: "/v1", ...httpDeps, runs, logger, agentIds: config.agents.list.map((a) => a.id), textOnlyModel: textOnlyModels(config), responses });
  registerToolsInvoke(app, httpDeps);
  registerApiSend(app, { ...httpDeps, sendTimeoutMs });
  registerHooks(app, { ...busDeps, hooks: config.hooks, limiter, trustedProxies });
  registerChannelIngress(app, {
    ...busDeps,
    limiter,
    trustedProxies,
    maxBodyBytes: config.delivery.inbound.maxBodyBytes,
    timeoutMs: config.delivery.inbound.timeoutMs,
  });

  // Our own `connections` set tracks the sockets, so ws keeps no second set (and no extra
  // close listener per socket).
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: limits.maxFrameBytes,
    clientTracking: false,
    WebSocket: EdgeSocket,
  });
  const perIp = new ConnectionsPerIp(limits.maxConnectionsPerIp);
  const connectionDeps: ConnectionDeps = {
    registry,
    authGate,
    identityRoles,
    logger,
    metrics: deps.metrics,
    events,
    devices,
    preConnectTimeoutMs: limits.preConnectTimeoutMs,
    limits: { maxInFlight: limits.maxInFlightPerConnection, maxSendBufferBytes: limits.maxSendBufferBytes },
    hello: {
      protocol: 1,
      server: { name: "agent-gateway", version: deps.version, edgeId: deps.edgeId },
      limits: { maxFrameBytes: limits.maxFrameBytes },
    },
    onClose: (conn) => connections.delete(conn),
    eventsDelivered: observed.eventsDelivered,
    accessLog: config.ops.accessLog,
    drain,
  };
  // The raw socket's close frees the IP's slot whether or not the upgrade completes. Made out
  // here so the listener's closure holds the address only, not the upgrade request.
  const holdSlotUntilClose = (socket: Duplex, clientIp: string) => {
    socket.on("close", () => perIp.release(clientIp));
  };

  // No closure made in here outlives the upgrade: a held connection must not keep its upgrade
  // request (headers, buffers) alive, which would cost more than the socket itself.
  const onUpgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = requestTarget(request.url, request.headers);
    if (!WS_PATHS.has(target.path)) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    // Node hands over upgrade sockets without an error listener; a reset during the awaits
    // below would otherwise be an uncaught 'error' that kills the process.
    socket.on("error", destroyOnError);
    const clientIp = trustedProxies.clientIp(request.socket.remoteAddress, request.headers);
    try {
      drain.assertAccepting();
      authGate.assertNotBlocked(clientIp);
      origins.check(request.headers, target.authority);
      perIp.acquire(clientIp);
    } catch (err) {
      if (isGatewayError(err)) refuseUpgrade(socket, err, logger);
      else socket.destroy();
      return;
    }
    if (socket.destroyed) {
      perIp.release(clientIp);
      return;
    }
    holdSlotUntilClose(socket, clientIp);
    const upgrade: UpgradeInfo = {
      peerIp: normalizeIp(request.socket.remoteAddress),
      clientIp,
      host: target.host,
      headers: request.headers,
    };
    wss.handleUpgrade(request, socket, head, (ws) => {
      connections.add(new Connection(ws as EdgeSocket, upgrade, connectionDeps));
    });
  };
  app.server.on("upgrade", (request, socket, head) => {
    // An upgrade that fails in a way onUpgrade did not foresee ends its own socket, never the process.
    onUpgrade(request, socket, head).catch((err: unknown) => {
      logger.error({ err }, "WebSocket upgrade failed");
      socket.destroy();
    });
  });

  await app.listen({ host: listen.host, port: listen.port });
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
          limiter.close();
          devices.close();
          runEvents.close();
          await presence.stop();
          await app.close();
        },
      }),
  };
}
