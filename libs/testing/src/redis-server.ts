import { tmpdir } from "node:os";
import { chooseBackend, type HarnessProbe } from "./backend.js";
import { spawnServer } from "./child-server.js";
import { startContainerServer } from "./container-server.js";
import { withFreePorts } from "./port-retry.js";
import { redisReady } from "./readiness.js";
import type { LaunchServer } from "./running-server.js";
import { ServerLifecycle } from "./server-lifecycle.js";

export interface StartRedisOptions {
  /** Override how binaries and Docker are found (tests of the harness itself). */
  probe?: Partial<HarnessProbe>;
}

export interface RedisServerHandle {
  url: string;
  port: number;
  /** Graceful shutdown and cleanup; start() may bring it back on the same port. */
  stop(): Promise<void>;
  /** Crash-like death (SIGKILL by default). Redis runs without persistence, so data is lost. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** (Re)starts on the same port and waits until it answers PING. */
  start(): Promise<void>;
}

const IMAGE = "redis:7";

export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisServerHandle> {
  const backend = await chooseBackend("redis-server", IMAGE, opts.probe);
  const noPersistence = ["--save", "", "--appendonly", "no"];
  return withFreePorts(1, async ([port = 0]) => {
    const launch: LaunchServer =
      backend.kind === "binary"
        ? async () =>
            spawnServer(backend.path, [
              "--port",
              String(port),
              "--bind",
              "127.0.0.1",
              // Nothing is written with persistence off, but keep redis away from the cwd.
              "--dir",
              tmpdir(),
              ...noPersistence,
            ])
        : () =>
            startContainerServer({
              image: backend.image,
              command: ["redis-server", ...noPersistence],
              ports: [{ container: 6379, host: port }],
            });
    const lifecycle = new ServerLifecycle({
      name: `redis-server on port ${port}`,
      launch,
      ready: () => redisReady(port),
    });
    await lifecycle.start();
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      stop: () => lifecycle.stop(),
      kill: (signal) => lifecycle.kill(signal),
      start: () => lifecycle.start(),
    };
  });
}
