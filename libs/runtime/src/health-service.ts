import type * as grpc from "@grpc/grpc-js";
import { HealthCheckRequest, HealthCheckResponse } from "@gw/contracts";

/**
 * grpc.health.v1.Health, described by hand so the ts-proto messages of @gw/contracts do the
 * (de)serialization and no .proto file is loaded at run time.
 */
export const HealthServiceDefinition = {
  Check: {
    path: "/grpc.health.v1.Health/Check",
    requestStream: false,
    responseStream: false,
    requestSerialize: (message: HealthCheckRequest) =>
      Buffer.from(HealthCheckRequest.encode(message).finish()),
    requestDeserialize: (bytes: Buffer) => HealthCheckRequest.decode(bytes),
    responseSerialize: (message: HealthCheckResponse) =>
      Buffer.from(HealthCheckResponse.encode(message).finish()),
    responseDeserialize: (bytes: Buffer) => HealthCheckResponse.decode(bytes),
    originalName: "check",
  },
  Watch: {
    path: "/grpc.health.v1.Health/Watch",
    requestStream: false,
    responseStream: true,
    requestSerialize: (message: HealthCheckRequest) =>
      Buffer.from(HealthCheckRequest.encode(message).finish()),
    requestDeserialize: (bytes: Buffer) => HealthCheckRequest.decode(bytes),
    responseSerialize: (message: HealthCheckResponse) =>
      Buffer.from(HealthCheckResponse.encode(message).finish()),
    responseDeserialize: (bytes: Buffer) => HealthCheckResponse.decode(bytes),
    originalName: "watch",
  },
} satisfies grpc.ServiceDefinition;
