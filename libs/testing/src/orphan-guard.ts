import { type ChildProcess, spawn } from "node:child_process";

const guarded = new Set<ChildProcess>();
let hooksInstalled = false;

function killAll(): void {
  for (const child of guarded) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  guarded.clear();
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.once("exit", killAll);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = () => {
      killAll();
      // Our listener suppresses the default "die on signal"; restore it when nobody else cares.
      if (process.listenerCount(sig) === 1) {
        process.removeListener(sig, onSignal);
        process.kill(process.pid, sig);
      }
    };
    process.on(sig, onSignal);
  }
}

/**
 * Exit hooks cannot run when the test process is SIGKILLed, so each server also gets a tiny
 * shell watchdog that reads a pipe from us: when this process dies the pipe closes and the
 * watchdog kills the server.
 */
function spawnWatchdog(pid: number): () => void {
  const watchdog = spawn(
    "sh",
    ["-c", 'cat >/dev/null 2>&1; kill -9 "$1" 2>/dev/null', "watchdog", String(pid)],
    {
      stdio: ["pipe", "ignore", "ignore"],
    },
  );
  watchdog.on("error", () => {});
  watchdog.unref();
  watchdog.stdin?.on("error", () => {});
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return () => {
    watchdog.kill("SIGKILL");
    watchdog.stdin?.destroy();
  };
}

/** Makes sure `child` dies with this process; call the returned function once it has exited. */
export function guardChild(child: ChildProcess): () => void {
  installHooks();
  guarded.add(child);
  const releaseWatchdog = child.pid === undefined ? () => {} : spawnWatchdog(child.pid);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    guarded.delete(child);
    releaseWatchdog();
  };
}
