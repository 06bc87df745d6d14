import type { BusObserver, HandlerErrorSink } from "@gw/bus";
import type { Logger, Metrics } from "@gw/runtime";
import type { RedisErrorSink } from "@gw/store";
import type { NatsConnection } from "@nats-io/nats-core";

/**
 * Bus RPC handlers counted in the request metrics (surface "bus"), and logged at debug level:
 * the line carries the request id of the edge request that caused it (the logger's mixin).
 */
export function busObserver(metrics: Metrics, logger: Logger): BusObserver {
  return {
    begin(method) {
      const request = metrics.meter.begin("bus", method);
      return (outcome) => {
        metrics.meter.end(request, outcome);
        if (logger.isLevelEnabled("debug")) {
          const ms = Math.round((performance.now() - request.startedAt) * 10) / 10;
          logger.debug({ method, outcome, ms }, "bus request");
        }
      };
    },
  };
}

function busErrors(metrics: Metrics) {
  return metrics.counter({
    name: "gw_bus_errors_total",
    help: "Bus failures: handler errors, and NATS connection errors and disconnects.",
    labelNames: ["kind"] as const,
  });
}

/** A handler that failed unexpectedly: logged with its cause, and counted. */
export function busErrorSink(logger: Logger, metrics: Metrics): HandlerErrorSink {
  const errors = busErrors(metrics);
  return (err, subject) => {
    errors.inc({ kind: "handler" });
    logger.error({ err, subject }, "bus handler failed");
  };
}

/** NATS connection trouble in the log and the metrics; nats.js reconnects by itself. */
export async function watchNatsStatus(nc: NatsConnection, logger: Logger, metrics: Metrics): Promise<void> {
  const errors = busErrors(metrics);
  for await (const status of nc.status()) {
    if (status.type === "disconnect") {
      errors.inc({ kind: "disconnect" });
      logger.warn({ server: status.server }, "NATS disconnected; reconnecting");
    } else if (status.type === "reconnect") {
      logger.info({ server: status.server }, "NATS reconnected");
    } else if (status.type === "error") {
      errors.inc({ kind: "error" });
      logger.warn({ err: status.error }, "NATS connection error");
    }
  }
}

/** Redis failures in the metrics, and connection errors in the log (command errors reach it through the caller). */
export function redisErrorSink(logger: Logger, metrics: Metrics): RedisErrorSink {
  const errors = metrics.counter({
    name: "gw_redis_errors_total",
    help: "Redis failures: commands that failed and connection errors.",
    labelNames: ["kind"] as const,
  });
  let lastLogged = 0;
  return (kind, err) => {
    errors.inc({ kind });
    // ioredis reports every reconnect attempt; one line a second is enough to see an outage.
    if (kind === "connection" && Date.now() - lastLogged >= 1_000) {
      lastLogged = Date.now();
      logger.warn({ err }, "Redis connection error; reconnecting");
    }
  };
}
