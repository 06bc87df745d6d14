import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { grpcHealth } from "./fixtures/grpc-health.js";
import { WsClient } from "./fixtures/ws-client.js";

describe.each(MODES)("health and metrics endpoints (%s)", (mode) => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway(mode, { health: true });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("serves gRPC health for the edge process", async () => {
    expect(await grpcHealth(gw.edges[0]!.healthPort!)).toBe("SERVING");
    expect(await grpcHealth(gw.edges[0]!.healthPort!, mode === "embedded" ? "gateway" : "edge")).toBe(
      "SERVING",
    );
  });

  it("counts WS requests by method and outcome in Prometheus metrics", async () => {
    const client = await WsClient.open(gw.wsUrl());
    await client.connect(TOKEN);
    await client.request("agents.list");
    await client.request("agent.identity.get", { agentId: "nobody" });
    await client.request("made.up.method");
    client.close();
    const text = await (await fetch(`http://127.0.0.1:${gw.edges[0]!.metricsPort}/metrics`)).text();
    expect(text).toMatch(/gw_requests_total\{[^}]*method="agents\.list"[^}]*outcome="ok"[^}]*\} 1/);
    expect(text).toMatch(
      /gw_requests_total\{[^}]*method="agent\.identity\.get"[^}]*outcome="NOT_FOUND"[^}]*\} 1/,
    );
    expect(text).toMatch(/gw_requests_total\{[^}]*method="unknown"[^}]*outcome="METHOD_NOT_FOUND"[^}]*\} 1/);
    expect(text).not.toContain("made.up.method");
    expect(text).toMatch(/nodejs_eventloop_lag_p99_seconds\{[^}]*\} \d/);
    expect(text).not.toContain(TOKEN);
  });
});
