import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletion, runToEnd } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway } from "./fixtures/gateway.js";
import { type OtlpReceiver, startOtlpReceiver } from "./fixtures/otlp-receiver.js";

describe.each(MODES)("without ops.tracing (%s)", (mode) => {
  let receiver: OtlpReceiver;
  let gw: GatewayUnderTest;
  const saved = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // Even with the SDK's own environment variable pointing at a collector, nothing is exported.
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = receiver.url;
    try {
      gw = await startGateway(mode, {});
    } finally {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
      else process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = saved;
    }
  });
  afterAll(async () => {
    await gw?.stop();
    await receiver?.close();
  });

  it("sends no export traffic", async () => {
    await runToEnd(gw, `untraced-${mode}`, "no traces");
    expect((await chatCompletion(gw, "no traces")).status).toBe(200);
    // Longer than the export interval (1 s) of a gateway that would export.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(receiver.requests).toBe(0);
    expect(gw.fullLogs()).not.toContain("exporting traces");
  });
});
