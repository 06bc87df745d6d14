import { connect } from "node:http2";
import * as grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { checkHealth, healthClient } from "./health-client.js";
import { type HealthServer, LIVENESS_SERVICE, startHealthServer } from "./health-server.js";

describe("startHealthServer", () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(probe: () => boolean): Promise<string> {
    server = await startHealthServer({ port: 0, host: "127.0.0.1", service: "edge", probe });
    expect(server.port).toBeGreaterThan(0);
    return `127.0.0.1:${server.port}`;
  }

  it("Check follows the probe at the moment of the call, for the server and the named service", async () => {
    let serving = false;
    const address = await start(() => serving);
    expect(await checkHealth(address, "")).toBe("NOT_SERVING");
    serving = true;
    expect(await checkHealth(address, "")).toBe("SERVING");
    expect(await checkHealth(address, "edge")).toBe("SERVING");
  });

  it("keeps liveness SERVING whatever the readiness probe says", async () => {
    const address = await start(() => false);
    expect(await checkHealth(address, "edge")).toBe("NOT_SERVING");
    expect(await checkHealth(address, LIVENESS_SERVICE)).toBe("SERVING");
  });

  it("Check on an unknown service fails with NOT_FOUND", async () => {
    const address = await start(() => true);
    expect(await checkHealth(address, "nope")).toBe(`error:${grpc.status.NOT_FOUND}`);
  });

  it("Check reports NOT_SERVING when the probe throws", async () => {
    const address = await start(() => {
      throw new Error("probe broke");
    });
    expect(await checkHealth(address, "")).toBe("NOT_SERVING");
  });

  it("Watch sends the current status, then each change (refresh tells at once)", async () => {
    let serving = true;
    const client = healthClient(await start(() => serving));
    const stream = client.watch({ service: "edge" });
    stream.on("error", () => {});
    const received: string[] = [];
    const second = new Promise<void>((resolve) => {
      stream.on("data", (message: { status: string }) => {
        received.push(message.status);
        if (received.length === 1) {
          serving = false;
          server!.refresh();
        }
        if (received.length === 2) resolve();
      });
    });
    await second;
    expect(received).toEqual(["SERVING", "NOT_SERVING"]);
    stream.cancel();
    client.close();
  });

  it("Watch on an unknown service reports SERVICE_UNKNOWN", async () => {
    const client = healthClient(await start(() => true));
    const stream = client.watch({ service: "nope" });
    // Cancelling below ends the call with CANCELLED, which is what the test intends.
    stream.on("error", () => {});
    const first = await new Promise<string>((resolve) => stream.once("data", (m: { status: string }) => resolve(m.status)));
    expect(first).toBe("SERVICE_UNKNOWN");
    stream.cancel();
    client.close();
  });

  it("ends open Watch streams when it closes, telling them NOT_SERVING first", async () => {
    const client = healthClient(await start(() => true));
    const stream = client.watch({ service: "" });
    stream.on("error", () => {});
    const received: string[] = [];
    stream.on("data", (m: { status: string }) => received.push(m.status));
    const ended = new Promise((resolve) => stream.once("end", resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await server!.close();
    server = undefined;
    await ended;
    expect(received).toEqual(["SERVING", "NOT_SERVING"]);
    client.close();
  });

  it("List names every service with its status", async () => {
    const client = healthClient(await start(() => true));
    const listed = await new Promise<Record<string, { status: string }>>((resolve, reject) =>
      client.list({}, { deadline: Date.now() + 3_000 }, (err, response) => (err ? reject(err) : resolve(response!.statuses))),
    );
    client.close();
    expect(listed).toEqual({ "": { status: "SERVING" }, edge: { status: "SERVING" }, [LIVENESS_SERVICE]: { status: "SERVING" } });
  });

  it("answers what is not a health call with a gRPC error or 415, and keeps serving", async () => {
    const address = await start(() => true);
    const session = connect(`http://${address}`);
    const call = (path: string, body: Buffer, contentType = "application/grpc") =>
      new Promise<{ status?: number; grpcStatus?: string }>((resolve, reject) => {
        const stream = session.request({ ":method": "POST", ":path": path, "content-type": contentType });
        let status: number | undefined;
        let grpcStatus: string | undefined;
        stream.on("response", (headers) => {
          status = headers[":status"];
          grpcStatus = headers["grpc-status"] as string | undefined;
        });
        stream.on("trailers", (trailers) => {
          grpcStatus = trailers["grpc-status"] as string | undefined;
        });
        stream.on("error", reject);
        stream.resume();
        stream.on("close", () => resolve({ status, grpcStatus }));
        stream.end(body);
      });
    try {
      expect(await call("/grpc.health.v1.Health/Nope", Buffer.alloc(0))).toEqual({ status: 200, grpcStatus: String(grpc.status.UNIMPLEMENTED) });
      // A frame whose length field disagrees with the body.
      expect(await call("/grpc.health.v1.Health/Check", Buffer.from([0, 0, 0, 0, 9, 1]))).toEqual({ status: 200, grpcStatus: String(grpc.status.INVALID_ARGUMENT) });
      expect(await call("/grpc.health.v1.Health/Check", Buffer.alloc(10_000))).toMatchObject({ grpcStatus: String(grpc.status.RESOURCE_EXHAUSTED) });
      expect((await call("/grpc.health.v1.Health/Check", Buffer.alloc(0), "text/plain")).status).toBe(415);
    } finally {
      session.close();
    }
    expect(await checkHealth(address, "edge")).toBe("SERVING");
  });
});
