import { dockerAvailable } from "./docker-probe.js";
import { findBinary } from "./find-binary.js";

/** How the harness discovers what it can run; tests inject fakes to reach every branch. */
export interface HarnessProbe {
  findBinary(name: string): string | undefined;
  dockerAvailable(): Promise<boolean>;
}

export type Backend = { kind: "binary"; path: string } | { kind: "docker"; image: string };

export const defaultProbe: HarnessProbe = { findBinary: (name) => findBinary(name), dockerAvailable };

export const INSTALL_HINT =
  "install the binaries (Debian/Ubuntu: `apt-get install nats-server redis-server`) " +
  "or install and start Docker so testcontainers can run them";

/** Binary on PATH first (fast, no daemon), then a container, else a message saying how to fix it. */
export async function chooseBackend(
  binary: string,
  image: string,
  probe: Partial<HarnessProbe> = {},
): Promise<Backend> {
  const find = probe.findBinary ?? defaultProbe.findBinary;
  const docker = probe.dockerAvailable ?? defaultProbe.dockerAvailable;
  const path = find(binary);
  if (path !== undefined) return { kind: "binary", path };
  if (await docker()) return { kind: "docker", image };
  throw new Error(`cannot start ${binary}: it is not on PATH and Docker is not usable; ${INSTALL_HINT}`);
}
