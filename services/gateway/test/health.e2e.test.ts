import { waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGateway } from "./fixtures/gateway.js";
import { grpcHealth } from "./fixtures/grpc-health.js";

describe("gRPC health follows the bus and store connections (distributed)", () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway("distributed", { health: true });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  const edgePort = () => gw.edges[0]!.healthPort!;
  const runnerPort = () => gw.runner!.healthPort!;
  const until = (port: () => number, status: string, what: string) =>
    waitFor(async () => ((await grpcHealth(port())) === status ? true : undefined), {
      timeoutMs: 15_000,
      what,
    });

  it("reports SERVING for the edge and the runner, NOT_FOUND for unknown services", async () => {
    expect(await grpcHealth(edgePort())).toBe("SERVING");
    expect(await grpcHealth(edgePort(), "edge")).toBe("SERVING");
    expect(await grpcHealth(runnerPort(), "agent-runner")).toBe("SERVING");
    expect(await grpcHealth(runnerPort(), "no-such-service")).toBe("error:5");
  });

  it("turns NOT_SERVING while Redis is down, and back", async () => {
    await gw.redis!.kill("SIGKILL");
    await until(edgePort, "NOT_SERVING", "edge NOT_SERVING without Redis");
    // The runner keeps its run registry in Redis, so it is not ready without it either.
    await until(runnerPort, "NOT_SERVING", "runner NOT_SERVING without Redis");
    const res = await fetch(`${gw.httpUrl()}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ok: false, status: "degraded" });
    await gw.redis!.start();
    await until(edgePort, "SERVING", "edge SERVING again");
    await until(runnerPort, "SERVING", "runner SERVING again");
  });

  it("turns NOT_SERVING while NATS is down, and back", async () => {
    await gw.nats!.kill("SIGKILL");
    await until(edgePort, "NOT_SERVING", "edge NOT_SERVING without NATS");
    await until(runnerPort, "NOT_SERVING", "runner NOT_SERVING without NATS");
    await gw.nats!.start();
    await until(edgePort, "SERVING", "edge SERVING again");
    await until(runnerPort, "SERVING", "runner SERVING again");
  });
});
