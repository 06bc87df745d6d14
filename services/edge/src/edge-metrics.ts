import type { Logger, Metrics, Tally } from "@gw/runtime";
import type { FailedAuthWatcher } from "./auth/failed-auth-limiter.js";

/** A connection's role once `connect` succeeded; "pending" before. */
const ROLES = ["control", "node", "webchat", "pending"] as const;

export interface EdgeMetrics {
  eventsDelivered: Tally;
  auth: FailedAuthWatcher;
}

/**
 * The edge's own metrics beyond requests: sockets by role (counted when scraped), events written
 * to sockets, failed authentications and the IP blocks they lead to (each block also a log line).
 */
export function edgeMetrics(
  metrics: Metrics,
  logger: Logger,
  connections: () => Iterable<{ role: string | undefined }>,
): EdgeMetrics {
  metrics.gauge({
    name: "gw_ws_connections",
    help: "Open WebSocket connections, by role (pending: before connect).",
    labelNames: ["role"] as const,
    collect() {
      const counts = new Map<string, number>(ROLES.map((role) => [role, 0]));
      for (const { role } of connections()) {
        const key = role ?? "pending";
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      for (const [role, count] of counts) this.set({ role }, count);
    },
  });
  const failures = metrics.counter({ name: "gw_auth_failures_total", help: "Failed authentication attempts." });
  const blocks = metrics.counter({
    name: "gw_auth_blocks_total",
    help: "Client IPs blocked by this edge for too many failed authentications.",
  });
  return {
    eventsDelivered: metrics.tally({ name: "gw_events_delivered_total", help: "Event frames written to WebSocket clients." }),
    auth: {
      failed: () => failures.inc(),
      blocked(ip, failureCount, forMs) {
        blocks.inc();
        logger.warn(
          { clientIp: ip, failures: failureCount, blockedForSeconds: Math.ceil(forMs / 1000) },
          "client IP blocked after too many failed authentications",
        );
      },
    },
  };
}
