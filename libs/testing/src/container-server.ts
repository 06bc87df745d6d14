import { OutputTail } from "./output-tail.js";
import type { RunningServer } from "./running-server.js";

export interface ContainerSpec {
  image: string;
  command: string[];
  /** Fixed host ports, so a restarted container is reachable at the same URL. */
  ports: { container: number; host: number }[];
  bindMounts?: { source: string; target: string }[];
}

/**
 * The Docker fallback, for machines without the binaries. Containers cannot take an arbitrary
 * signal through testcontainers, so kill() is an immediate stop whatever the signal.
 */
export async function startContainerServer(spec: ContainerSpec): Promise<RunningServer> {
  const { GenericContainer } = await import("testcontainers");
  let builder = new GenericContainer(spec.image)
    .withCommand(spec.command)
    .withExposedPorts(...spec.ports.map((p) => ({ container: p.container, host: p.host })));
  if (spec.bindMounts !== undefined && spec.bindMounts.length > 0) {
    builder = builder.withBindMounts(spec.bindMounts.map((m) => ({ ...m, mode: "rw" as const })));
  }
  const container = await builder.start();
  const tail = new OutputTail();
  const logs = await container.logs();
  logs.on("data", (chunk: Buffer | string) => tail.push(chunk));
  logs.on("error", () => {});
  let stopped = false;
  const stop = async (timeoutMs: number) => {
    if (stopped) return;
    stopped = true;
    await container.stop({ timeout: timeoutMs, remove: true });
  };
  return {
    output: () => tail.text(),
    exitReason: () => undefined,
    kill: () => stop(0),
    terminate: (graceMs) => stop(graceMs),
  };
}
