import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./index.js";

const root = new URL("../../../", import.meta.url);
const env = { GATEWAY_TOKEN: "deploy-token-example" };

/** The config block of the k8s ConfigMap (`gateway.json5: |` followed by indented lines). */
function configMapBlock(text: string): string {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.trim() === "gateway.json5: |");
  expect(start).toBeGreaterThan(-1);
  const body = lines.slice(start + 1).filter((line) => line.startsWith("    ") || line.trim() === "");
  return body.map((line) => line.slice(4)).join("\n");
}

describe("deployment configs validate against the schema", () => {
  it("config/compose.json5 (docker compose)", () => {
    const text = readFileSync(new URL("config/compose.json5", root), "utf8");
    const config = parseConfig(text, { env, source: "config/compose.json5" });
    expect(config.nats.url).toBe("nats://nats:4222");
    expect(config.gateway.auth.token).toBe(env.GATEWAY_TOKEN);
  });

  it("k8s/configmap.yaml (Kubernetes)", () => {
    const text = configMapBlock(readFileSync(new URL("k8s/configmap.yaml", root), "utf8"));
    const config = parseConfig(text, { env, source: "k8s/configmap.yaml" });
    expect(config.ops.healthPort).toBe(50051);
    expect(config.ops.metricsPort).toBe(9464);
  });
});
