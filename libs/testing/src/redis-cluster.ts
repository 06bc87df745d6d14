import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { INSTALL_HINT } from "./backend.js";
import { spawnServer } from "./child-server.js";
import { findBinary } from "./find-binary.js";
import { withFreePorts } from "./port-retry.js";
import { redisReady } from "./readiness.js";
import { ServerLifecycle } from "./server-lifecycle.js";
import { managedDir } from "./temp-dir.js";
import { waitFor } from "./wait-for.js";

const run = promisify(execFile);

export interface RedisClusterHandle {
  /** Every master's URL: the seed nodes a cluster client is given. */
  nodes: string[];
  /** Stops every node and removes the cluster's files. */
  stop(): Promise<void>;
}

export interface StartRedisClusterOptions {
  /** Masters in the cluster (default 3, the least `redis-cli --cluster create` accepts). */
  size?: number;
}

function need(name: string): string {
  const path = findBinary(name);
  if (path === undefined) throw new Error(`cannot start a Redis Cluster: ${name} is not on PATH; ${INSTALL_HINT}`);
  return path;
}

async function clusterOk(cli: string, port: number): Promise<true | undefined> {
  const { stdout } = await run(cli, ["-h", "127.0.0.1", "-p", String(port), "cluster", "info"], { timeout: 2_000 });
  return /cluster_state:ok/.test(stdout) ? true : undefined;
}

/**
 * A Redis Cluster on loopback: `size` `redis-server --cluster-enabled yes` masters without
 * persistence, their slots assigned by `redis-cli --cluster create --cluster-replicas 0`.
 * Needs the redis-server and redis-cli binaries.
 */
export async function startRedisCluster(opts: StartRedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const size = opts.size ?? 3;
  const server = need("redis-server");
  const cli = need("redis-cli");
  const dir = await managedDir("gw-redis-cluster-", undefined);
  try {
    return await withFreePorts(size * 2, async (ports) => {
      const client = ports.slice(0, size);
      const bus = ports.slice(size);
      const lifecycles = client.map(
        (port, i) =>
          new ServerLifecycle({
            name: `redis-server (cluster) on port ${port}`,
            launch: async () =>
              spawnServer(server, [
                "--port", String(port),
                "--bind", "127.0.0.1",
                "--cluster-enabled", "yes",
                "--cluster-port", String(bus[i]),
                "--cluster-config-file", `nodes-${port}.conf`,
                "--cluster-node-timeout", "2000",
                "--dir", dir.path,
                "--save", "",
                "--appendonly", "no",
              ]),
            ready: () => redisReady(port),
          }),
      );
      const stopAll = () => Promise.all(lifecycles.map((l) => l.stop()));
      try {
        await Promise.all(lifecycles.map((l) => l.start()));
        const members = client.map((port) => `127.0.0.1:${port}`);
        await run(cli, ["--cluster", "create", ...members, "--cluster-replicas", "0", "--cluster-yes"], { timeout: 20_000 });
        for (const port of client) {
          await waitFor(() => clusterOk(cli, port), { timeoutMs: 20_000, intervalMs: 100, what: `the cluster state on port ${port}` });
        }
      } catch (err) {
        await stopAll();
        throw err;
      }
      return {
        nodes: client.map((port) => `redis://127.0.0.1:${port}`),
        stop: async () => {
          await stopAll();
          await dir.remove();
        },
      };
    });
  } catch (err) {
    await dir.remove();
    throw err;
  }
}
