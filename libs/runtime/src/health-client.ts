// A grpc.health.v1 client on grpc-js, for tests and tools (`@gw/runtime/health-client`): grpc-js is a
// dev dependency, so no service imports this; Kubernetes probes the servers natively.
import * as grpc from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";

/** What a Check answers: a serving status, or `error:<gRPC code>` (5 = unknown service). */
export type HealthAnswer = "SERVING" | "NOT_SERVING" | "UNKNOWN" | `error:${number}`;

interface HealthStub extends grpc.Client {
  check(
    request: { service: string },
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, response?: { status: string }) => void,
  ): grpc.ClientUnaryCall;
  watch(request: { service: string }): grpc.ClientReadableStream<{ status: string }>;
  list(
    request: Record<string, never>,
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, response?: { statuses: Record<string, { status: string }> }) => void,
  ): grpc.ClientUnaryCall;
}

const HealthClient = grpc.makeGenericClientConstructor(healthService, "grpc.health.v1.Health");

/** A grpc.health.v1 client (probes in tests and tools; Kubernetes probes natively). */
export function healthClient(address: string): HealthStub {
  return new HealthClient(address, grpc.credentials.createInsecure()) as unknown as HealthStub;
}

/** One Check call with a deadline. */
export function checkHealth(address: string, service = "", timeoutMs = 3_000): Promise<HealthAnswer> {
  const client = healthClient(address);
  return new Promise((resolve) => {
    client.check({ service }, { deadline: Date.now() + timeoutMs }, (err, response) => {
      client.close();
      resolve(err ? `error:${err.code}` : (response!.status as HealthAnswer));
    });
  });
}
