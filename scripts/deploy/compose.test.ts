import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfigFile } from "@gw/config";
import { describe, expect, it } from "vitest";
import { distributedServices, readYamlDocuments, ROOT, serverDependencies } from "./deploy-files.js";

interface ComposeService {
  image?: string;
  build?: { context: string; target: string };
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
  healthcheck?: object;
}

const compose = readYamlDocuments(join(ROOT, "docker-compose.yml"))[0] as { services: Record<string, ComposeService> };

/** "30s", "1m30s" -> milliseconds (compose's duration format). */
function durationMs(text: string): number {
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) throw new Error(`not a compose duration: ${text}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  return parts.reduce((sum, [, n, u]) => sum + Number(n) * unit[u as keyof typeof unit], 0);
}

/** The host file a container path comes from, through the service's bind mounts. */
function hostPath(service: ComposeService, containerPath: string): string | undefined {
  for (const volume of service.volumes ?? []) {
    const [source, target] = volume.split(":");
    if (source?.startsWith("./") && target && containerPath.startsWith(`${target}/`)) {
      return join(ROOT, source, containerPath.slice(target.length + 1));
    }
  }
  return undefined;
}

describe("docker-compose.yml", () => {
  it("runs every distributed service from its own image target", () => {
    for (const name of distributedServices()) {
      const service = compose.services[name];
      expect(service, `a compose service for services/${name} (see the hooks note in docker-compose.yml)`).toBeDefined();
      expect(service!.build).toEqual({ context: ".", target: name });
    }
  });

  it("starts each service after the servers its main.ts connects to are healthy", () => {
    for (const name of distributedServices()) {
      const needs = serverDependencies(name);
      const dependsOn = compose.services[name]!.depends_on ?? {};
      expect(Object.keys(dependsOn).sort(), name).toEqual(needs.sort());
      for (const server of needs) {
        expect(dependsOn[server]!.condition, `${name} -> ${server}`).toBe("service_healthy");
        expect(compose.services[server]!.healthcheck, `${server} has a healthcheck`).toBeDefined();
      }
    }
  });

  it("gives each service a config that validates and a stop grace period above its drain deadline", () => {
    for (const name of distributedServices()) {
      const service = compose.services[name]!;
      const path = service.environment?.GATEWAY_CONFIG;
      expect(path, `${name} GATEWAY_CONFIG`).toBeDefined();
      const file = hostPath(service, path!);
      expect(file && existsSync(file), `${name}: ${path} is a mounted file`).toBe(true);
      const env = Object.fromEntries(Object.keys(service.environment ?? {}).map((key) => [key, "placeholder-value"]));
      const config = loadConfigFile(file!, { env });
      expect(config.nats.url).toBe("nats://nats:4222");
      if (serverDependencies(name).includes("redis")) expect(config.redis.url).toBe("redis://redis:6379");
      expect(durationMs(service.stop_grace_period ?? "10s"), `${name} stop_grace_period`).toBeGreaterThan(
        config.ops.shutdownTimeoutMs,
      );
    }
  });

  it("leaves a marked place for the hooks service until it lands", () => {
    const text = readFileSync(join(ROOT, "docker-compose.yml"), "utf8");
    if (!distributedServices().includes("hooks")) expect(text).toMatch(/# hooks: add the hooks service here/);
  });
});
