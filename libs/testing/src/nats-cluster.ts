import { INSTALL_HINT } from "./backend.js";
import { spawnServer } from "./child-server.js";
import { findBinary } from "./find-binary.js";
import { withFreePorts } from "./port-retry.js";
import { natsReady } from "./readiness.js";
import { ServerLifecycle } from "./server-lifecycle.js";
import { managedDir } from "./temp-dir.js";

export interface NatsClusterNode {
  name: string;
  url: string;
  port: number;
  /** Crash-like death (SIGKILL by default); the node's store dir stays for start(). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** (Re)starts the node on its ports with its store dir and waits until it is ready. */
  start(): Promise<void>;
}

export interface NatsClusterHandle {
  /** Every node's client URL, for a client's server list. */
  urls: string[];
  nodes: NatsClusterNode[];
  /** Stops every node and removes their store dirs. */
  stop(): Promise<void>;
}

export interface StartNatsClusterOptions {
  /** Nodes in the cluster (default 3). */
  size?: number;
}

/** Ready once its JetStream has a meta leader: before that, clustered stream creation fails. */
async function metaLeaderKnown(monitorPort: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${monitorPort}/jsz`, { signal: AbortSignal.timeout(1_000) });
  const jsz = (await res.json()) as { meta_cluster?: { leader?: string } };
  return typeof jsz.meta_cluster?.leader === "string" && jsz.meta_cluster.leader !== "";
}

/**
 * A NATS cluster on loopback: `size` nats-server processes joined by routes, JetStream on each
 * with its own store dir, so replicated (R3) streams can be tested and nodes killed under load.
 * Needs the nats-server binary (a cluster in containers is not supported).
 */
export async function startNatsCluster(opts: StartNatsClusterOptions = {}): Promise<NatsClusterHandle> {
  const size = opts.size ?? 3;
  const binary = findBinary("nats-server");
  if (binary === undefined) throw new Error(`cannot start a NATS cluster: nats-server is not on PATH; ${INSTALL_HINT}`);
  const dirs = await Promise.all(Array.from({ length: size }, () => managedDir("gw-nats-cluster-", undefined)));
  const removeDirs = () => Promise.all(dirs.map((d) => d.remove()));
  try {
    return await withFreePorts(size * 3, async (ports) => {
      const client = ports.slice(0, size);
      const monitor = ports.slice(size, 2 * size);
      const route = ports.slice(2 * size);
      const routes = route.map((p) => `nats://127.0.0.1:${p}`).join(",");
      const lifecycles = client.map((port, i) => {
        const name = `n${i + 1}`;
        const args = ["-a", "127.0.0.1", "-p", String(port), "-m", String(monitor[i]), "--server_name", name];
        args.push("--cluster_name", "gwtest", "--cluster", `nats://127.0.0.1:${route[i]}`, "--routes", routes);
        args.push("-js", "-sd", dirs[i]!.path);
        return new ServerLifecycle({
          name: `nats-server ${name} on port ${port}`,
          launch: async () => spawnServer(binary, args),
          // /healthz turns ok only once this node's JetStream has joined the meta group.
          ready: async () => (await natsReady(port, monitor[i]!)) && metaLeaderKnown(monitor[i]!),
          prepare: () => dirs[i]!.ensure(),
          cleanup: () => dirs[i]!.remove(),
          startTimeoutMs: 30_000,
        });
      });
      const stopAll = () => Promise.all(lifecycles.map((l) => l.stop()));
      try {
        // All at once: a node's JetStream waits for the others to elect a meta leader.
        await Promise.all(lifecycles.map((l) => l.start()));
      } catch (err) {
        await stopAll();
        throw err;
      }
      const nodes = client.map((port, i) => ({
        name: `n${i + 1}`,
        url: `nats://127.0.0.1:${port}`,
        port,
        kill: (signal?: NodeJS.Signals) => lifecycles[i]!.kill(signal),
        start: () => lifecycles[i]!.start(),
      }));
      return { urls: nodes.map((n) => n.url), nodes, stop: async () => void (await stopAll()) };
    });
  } catch (err) {
    await removeDirs();
    throw err;
  }
}
