import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

describe("an agent run while no sessions service answers (distributed)", () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway("distributed");
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("fails with UNAVAILABLE instead of answering without recording the exchange", async () => {
    const client = await WsClient.open(gw.wsUrl());
    await client.connect(TOKEN);
    const before = await client.request("agent", { message: "kept", sessionKey: "e2e:nosessions" });
    expect(before.ok).toBe(true);

    for (const proc of gw.sessions ?? []) await proc.stop();
    const during = await client.request("agent", { message: "would be lost", sessionKey: "e2e:nosessions" });
    expect(during).toMatchObject({ ok: false, error: { code: "UNAVAILABLE" } });
    const lifecycle = await client.next(
      (f) => f.event === "agent" && (f.payload?.data as { phase?: string } | undefined)?.phase === "error",
    );
    expect(lifecycle.payload).toMatchObject({ stream: "lifecycle", data: { phase: "error", code: "UNAVAILABLE" } });

    await gw.addSessionsReplica!();
    const preview = await client.request("sessions.preview", { key: "e2e:nosessions" });
    const bodies = (preview.payload?.messages as Array<{ body: string }>).map((m) => m.body);
    expect(bodies).toContain("kept");
    expect(bodies).not.toContain("would be lost");
    client.close();
  });
});
