import { chooseBackend, type HarnessProbe } from "./backend.js";
import { spawnServer } from "./child-server.js";
import { startContainerServer } from "./container-server.js";
import { withFreePorts } from "./port-retry.js";
import { natsReady } from "./readiness.js";
import type { LaunchServer } from "./running-server.js";
import { ServerLifecycle } from "./server-lifecycle.js";
import { managedDir } from "./temp-dir.js";

export interface StartNatsOptions {
  /** Run with JetStream (default true). */
  jetstream?: boolean;
  /** Use this JetStream store dir instead of a fresh temp dir; it is never deleted. */
  storeDir?: string;
  /** Override how binaries and Docker are found (tests of the harness itself). */
  probe?: Partial<HarnessProbe>;
}

export interface NatsServerHandle {
  url: string;
  port: number;
  /** The monitoring endpoint (`/varz`, `/connz`, `/healthz`): `http://127.0.0.1:<port>`. */
  monitorUrl: string;
  storeDir: string;
  /** Graceful shutdown; removes the store dir when the harness created it. */
  stop(): Promise<void>;
  /** Crash-like death (SIGKILL by default) that keeps the store dir for a later start(). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** (Re)starts on the same port with the same store dir and waits until it is ready. */
  start(): Promise<void>;
}

const IMAGE = "nats:2.9";

export async function startNats(opts: StartNatsOptions = {}): Promise<NatsServerHandle> {
  const jetstream = opts.jetstream ?? true;
  const backend = await chooseBackend("nats-server", IMAGE, opts.probe);
  const dir = await managedDir("gw-nats-", opts.storeDir);
  try {
    return await withFreePorts(2, async ([port = 0, monitorPort = 0]) => {
      const launch: LaunchServer =
        backend.kind === "binary"
          ? async () => {
              const args = ["-a", "127.0.0.1", "-p", String(port), "-m", String(monitorPort)];
              if (jetstream) args.push("-js", "-sd", dir.path);
              return spawnServer(backend.path, args);
            }
          : () =>
              startContainerServer({
                image: backend.image,
                command: jetstream ? ["-m", "8222", "-js", "-sd", "/data"] : ["-m", "8222"],
                ports: [
                  { container: 4222, host: port },
                  { container: 8222, host: monitorPort },
                ],
                bindMounts: jetstream ? [{ source: dir.path, target: "/data" }] : [],
              });
      const lifecycle = new ServerLifecycle({
        name: `nats-server on port ${port}`,
        launch,
        ready: () => natsReady(port, monitorPort),
        prepare: () => dir.ensure(),
        cleanup: () => dir.remove(),
      });
      await lifecycle.start();
      return {
        url: `nats://127.0.0.1:${port}`,
        port,
        monitorUrl: `http://127.0.0.1:${monitorPort}`,
        storeDir: dir.path,
        stop: () => lifecycle.stop(),
        kill: (signal) => lifecycle.kill(signal),
        start: () => lifecycle.start(),
      };
    });
  } catch (err) {
    await dir.remove();
    throw err;
  }
}
