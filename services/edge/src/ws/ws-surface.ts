import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import type { GatewayConfig } from "@gw/config";
import { type GatewayError, isGatewayError } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { WebSocketServer } from "ws";
import { normalizeIp, requestTarget, type TrustedProxies } from "../auth/client-address.js";
import type { OriginPolicy } from "../auth/origin-policy.js";
import { httpErrorResponse } from "../http/errors.js";
import type { UpgradeInfo } from "./connect-handshake.js";
import { Connection, type ConnectionDeps } from "./connection.js";
import { EdgeSocket } from "./edge-socket.js";
import { ConnectionsPerIp } from "./limits.js";

const WS_PATHS = new Set(["/", "/ws"]);

export interface WsSurfaceDeps extends Omit<ConnectionDeps, "onClose" | "preConnectTimeoutMs" | "limits" | "hello"> {
  /** The edge's open connections: a socket joins once upgraded and leaves when it closes. */
  connections: Set<Connection>;
  trustedProxies: TrustedProxies;
  origins: OriginPolicy;
  limits: GatewayConfig["gateway"]["limits"];
  /** Who answers `connect`: the server's identity in its response. */
  server: { version: string; edgeId: string };
}

/** What every connection of this edge shares, made once. */
function connectionDeps(deps: WsSurfaceDeps): ConnectionDeps {
  const { connections, limits } = deps;
  return {
    ...deps,
    preConnectTimeoutMs: limits.preConnectTimeoutMs,
    limits: { maxInFlight: limits.maxInFlightPerConnection, maxSendBufferBytes: limits.maxSendBufferBytes },
    hello: {
      protocol: 1,
      server: { name: "agent-gateway", ...deps.server },
      limits: { maxFrameBytes: limits.maxFrameBytes },
    },
    onClose: (conn) => connections.delete(conn),
  };
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

/**
 * The WebSocket surface on `/` and `/ws` of the HTTP server: an upgrade passes the drain, the
 * IP block, the origin check and the per-IP cap before ws takes it, and each socket becomes a
 * Connection. It is no fastify plugin: upgrades reach the HTTP server, not fastify's router.
 * Returns the WebSocket server, which the edge closes once its sockets are closed.
 */
export function listenForUpgrades(server: Server, deps: WsSurfaceDeps): WebSocketServer {
  const { connections, drain, logger } = deps;
  // Our own `connections` set tracks the sockets, so ws keeps no second set (and no extra
  // close listener per socket).
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.limits.maxFrameBytes, clientTracking: false, WebSocket: EdgeSocket });
  const perIp = new ConnectionsPerIp(deps.limits.maxConnectionsPerIp);
  const shared = connectionDeps(deps);
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
    const clientIp = deps.trustedProxies.clientIp(request.socket.remoteAddress, request.headers);
    try {
      drain.assertAccepting();
      deps.authGate.assertNotBlocked(clientIp);
      deps.origins.check(request.headers, target.authority);
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
    const upgrade: UpgradeInfo = { peerIp: normalizeIp(request.socket.remoteAddress), clientIp, host: target.host, headers: request.headers };
    wss.handleUpgrade(request, socket, head, (ws) => {
      connections.add(new Connection(ws as EdgeSocket, upgrade, shared));
    });
  };
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // An upgrade that fails in a way onUpgrade did not foresee ends its own socket, never the process.
    onUpgrade(request, socket, head).catch((err: unknown) => {
      logger.error({ err }, "WebSocket upgrade failed");
      socket.destroy();
    });
  });
  return wss;
}
