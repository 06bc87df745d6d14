import * as grpc from "@grpc/grpc-js";
import { HealthCheckResponse_ServingStatus as Status } from "@gw/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { HealthServiceDefinition } from "./health-service.js";
import { type HealthServer, startHealthServer } from "./index.js";

const HealthClient = grpc.makeGenericClientConstructor(HealthServiceDefinition, "grpc.health.v1.Health");

interface Client extends grpc.Client {
  Check(
    request: { service: string },
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, response?: { status: Status }) => void,
  ): grpc.ClientUnaryCall;
  Watch(request: { service: string }): grpc.ClientReadableStream<{ status: Status }>;
}

function check(client: Client, service: string): Promise<Status> {
  return new Promise((resolve, reject) => {
    client.Check({ service }, { deadline: Date.now() + 5_000 }, (err, response) =>
      err ? reject(err) : resolve(response!.status),
    );
  });
}

describe("startHealthServer", () => {
  let server: HealthServer | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  async function start(probe: () => boolean): Promise<Client> {
    server = await startHealthServer({ port: 0, host: "127.0.0.1", service: "edge", probe });
    expect(server.port).toBeGreaterThan(0);
    client = new HealthClient(
      `127.0.0.1:${server.port}`,
      grpc.credentials.createInsecure(),
    ) as unknown as Client;
    return client;
  }

  it("Check follows the probe for the server and the named service", async () => {
    let serving = false;
    const c = await start(() => serving);
    expect(await check(c, "")).toBe(Status.NOT_SERVING);
    serving = true;
    expect(await check(c, "")).toBe(Status.SERVING);
    expect(await check(c, "edge")).toBe(Status.SERVING);
  });

  it("Check on an unknown service fails with NOT_FOUND", async () => {
    const c = await start(() => true);
    await expect(check(c, "nope")).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it("Check reports NOT_SERVING when the probe throws", async () => {
    const c = await start(() => {
      throw new Error("probe broke");
    });
    expect(await check(c, "")).toBe(Status.NOT_SERVING);
  });

  it("Watch sends the current status, then each change, and ends on close", async () => {
    let serving = true;
    const c = await start(() => serving);
    const stream = c.Watch({ service: "edge" });
    const received: Status[] = [];
    const ended = new Promise<void>((resolve) => {
      stream.on("end", resolve);
      stream.on("error", () => resolve());
    });
    const second = new Promise<void>((resolve) => {
      stream.on("data", (message: { status: Status }) => {
        received.push(message.status);
        if (received.length === 1) serving = false;
        if (received.length === 2) resolve();
      });
    });
    await second;
    expect(received).toEqual([Status.SERVING, Status.NOT_SERVING]);
    await server!.close();
    server = undefined;
    await ended;
  });

  it("Watch on an unknown service reports SERVICE_UNKNOWN", async () => {
    const c = await start(() => true);
    const stream = c.Watch({ service: "nope" });
    // Cancelling below ends the call with CANCELLED, which is what the test intends.
    stream.on("error", () => {});
    const first = await new Promise<Status>((resolve) =>
      stream.once("data", (m: { status: Status }) => resolve(m.status)),
    );
    expect(first).toBe(Status.SERVICE_UNKNOWN);
    stream.cancel();
  });
});
