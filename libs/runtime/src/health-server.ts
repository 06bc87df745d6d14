import * as grpc from "@grpc/grpc-js";
import {
  type HealthCheckRequest,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
} from "@gw/contracts";
import { HealthServiceDefinition } from "./health-service.js";
import type { Logger } from "./logger.js";

export interface HealthServer {
  /** The bound port (the actual one when 0 was asked for). */
  port: number;
  close(): Promise<void>;
}

export interface HealthServerOptions {
  port: number;
  /** Probes come from outside the pod, so all interfaces unless told otherwise. */
  host?: string;
  /** Known service name besides "" (the server as a whole). */
  service: string;
  /** True = SERVING. Called on every Check and every poll of a Watch. */
  probe: () => boolean;
  logger?: Logger;
}

const WATCH_POLL_MS = 500;
const CLOSE_GRACE_MS = 2_000;

/** Serves grpc.health.v1.Health (Check and Watch) for Kubernetes gRPC probes. */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const server = new grpc.Server();
  const watches = new Set<() => void>();
  const known = (service: string) => service === "" || service === opts.service;
  const status = (): HealthCheckResponse_ServingStatus => {
    try {
      return opts.probe()
        ? HealthCheckResponse_ServingStatus.SERVING
        : HealthCheckResponse_ServingStatus.NOT_SERVING;
    } catch (err) {
      opts.logger?.warn({ err }, "health probe threw; reporting NOT_SERVING");
      return HealthCheckResponse_ServingStatus.NOT_SERVING;
    }
  };

  const check: grpc.handleUnaryCall<HealthCheckRequest, HealthCheckResponse> = (call, callback) => {
    if (!known(call.request.service)) {
      callback({ code: grpc.status.NOT_FOUND, details: `unknown service "${call.request.service}"` });
      return;
    }
    callback(null, { status: status() });
  };

  const watch: grpc.handleServerStreamingCall<HealthCheckRequest, HealthCheckResponse> = (call) => {
    // Per the health protocol, Watch on an unknown service reports SERVICE_UNKNOWN and stays open.
    const current = () =>
      known(call.request.service) ? status() : HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN;
    let last = current();
    call.write({ status: last });
    const timer = setInterval(() => {
      const next = current();
      if (next !== last) {
        last = next;
        call.write({ status: next });
      }
    }, WATCH_POLL_MS);
    timer.unref();
    const stop = () => {
      clearInterval(timer);
      watches.delete(end);
    };
    const end = () => {
      stop();
      call.end();
    };
    watches.add(end);
    call.on("cancelled", stop);
    call.on("error", stop);
  };

  server.addService(HealthServiceDefinition, { Check: check, Watch: watch });
  const host = opts.host ?? "0.0.0.0";
  const address = host.includes(":") ? `[${host}]:${opts.port}` : `${host}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  opts.logger?.info({ port, service: opts.service }, "gRPC health server listening");

  return {
    port,
    close: async () => {
      for (const end of [...watches]) end();
      await new Promise<void>((resolve) => {
        // Calls still open after the grace period (a stuck client) must not block shutdown.
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
