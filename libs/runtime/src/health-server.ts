import * as grpc from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";
import type { Logger } from "./logger.js";

export interface HealthServer {
  /** The bound port (the actual one when 0 was asked for). */
  port: number;
  /** Reads the probe now and tells Watch streams of a change (the drain calls it first). */
  refresh(): void;
  close(): Promise<void>;
}

export interface HealthServerOptions {
  port: number;
  /** The address to listen on (ops.bind, or gateway.bind). */
  host: string;
  /** Known service name besides "" (the server as a whole). */
  service: string;
  /** True = SERVING. Called on every Check and every poll for Watch streams. */
  probe: () => boolean;
  logger?: Logger;
}

/**
 * The liveness service: SERVING while the process answers at all, whatever its connections. A
 * Redis outage should take a pod out of its Service (readiness), not restart it.
 */
export const LIVENESS_SERVICE = "liveness";

const WATCH_POLL_MS = 500;
const CLOSE_GRACE_MS = 2_000;

type UnaryHandler = grpc.handleUnaryCall<{ service: string }, { status: ServingStatus }>;
type WatchHandler = grpc.handleServerStreamingCall<{ service: string }, { status: ServingStatus }>;

/**
 * Serves grpc.health.v1.Health (Check, Watch, List) for Kubernetes' native gRPC probes, with the
 * gRPC team's implementation. Readiness ("" and the process's service name) follows `probe`;
 * `liveness` is SERVING until the server closes.
 */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const server = new grpc.Server();
  const health = new HealthImplementation({ "": "NOT_SERVING", [opts.service]: "NOT_SERVING", [LIVENESS_SERVICE]: "SERVING" });
  let last: ServingStatus | undefined;
  const refresh = () => {
    let status: ServingStatus;
    try {
      status = opts.probe() ? "SERVING" : "NOT_SERVING";
    } catch (err) {
      opts.logger?.warn({ err }, "health probe threw; reporting NOT_SERVING");
      status = "NOT_SERVING";
    }
    if (status === last) return;
    last = status;
    health.setStatus("", status);
    health.setStatus(opts.service, status);
  };
  refresh();
  // The library answers from the status it was last given; a Check asks the probe first, so a
  // kubelet probe sees the state of this moment, and Watch streams hear of changes by the poll.
  // Open Watch streams are kept so that close can end them instead of waiting on their clients.
  const watches = new Set<grpc.ServerWritableStream<{ service: string }, { status: ServingStatus }>>();
  health.addToServer({
    addService: (definition, implementation) => {
      const check = implementation.check as UnaryHandler;
      const watch = implementation.watch as WatchHandler;
      server.addService(definition, {
        ...implementation,
        check: ((call, callback) => {
          refresh();
          check(call, callback);
        }) satisfies UnaryHandler,
        watch: ((call) => {
          watches.add(call);
          call.on("cancelled", () => watches.delete(call));
          watch(call);
        }) satisfies WatchHandler,
      });
    },
  });
  const poll = setInterval(refresh, WATCH_POLL_MS);
  poll.unref();

  const address = opts.host.includes(":") ? `[${opts.host}]:${opts.port}` : `${opts.host}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  opts.logger?.info({ host: opts.host, port, service: opts.service }, "gRPC health server listening");

  return {
    port,
    refresh,
    close: async () => {
      clearInterval(poll);
      for (const service of ["", opts.service, LIVENESS_SERVICE]) health.setStatus(service, "NOT_SERVING");
      for (const call of watches) call.end();
      watches.clear();
      await new Promise<void>((resolve) => {
        // A call stuck on a client that does not read must not hold up shutdown.
        const force = setTimeout(() => server.forceShutdown(), CLOSE_GRACE_MS);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}
