import { type ChildProcess, spawn } from "node:child_process";
import { guardChild } from "./orphan-guard.js";
import { OutputTail } from "./output-tail.js";
import type { RunningServer } from "./running-server.js";

const FORCED_EXIT_WAIT_MS = 5_000;

function waitForExit(child: ChildProcess, exited: Promise<void>, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    exited.then(done, done);
  });
}

/** Spawns `binary` with `args`; its output is captured and it cannot outlive this process. */
export function spawnServer(binary: string, args: string[]): RunningServer {
  const tail = new OutputTail();
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  const release = guardChild(child);
  let expectingExit = false;
  let reason: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      release();
      if (!expectingExit) reason = `exited unexpectedly (code ${code}, signal ${signal})`;
      resolve();
    });
    child.once("error", (err) => {
      release();
      reason = `failed to spawn ${binary}: ${err.message}`;
      resolve();
    });
  });
  child.stdout?.on("data", (chunk: Buffer) => tail.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => tail.push(chunk));
  // A forgotten stop() must not keep the test process alive; the exit hooks kill it instead.
  child.unref();
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();

  const signalAndWait = async (signal: NodeJS.Signals, ms: number) => {
    expectingExit = true;
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return waitForExit(child, exited, ms);
  };

  return {
    output: () => tail.text(),
    exitReason: () => reason,
    async kill(signal) {
      if (await signalAndWait(signal, FORCED_EXIT_WAIT_MS)) return;
      if (!(await signalAndWait("SIGKILL", FORCED_EXIT_WAIT_MS))) {
        throw new Error(`${binary} (pid ${child.pid}) did not exit after SIGKILL`);
      }
    },
    async terminate(graceMs) {
      if (await signalAndWait("SIGTERM", graceMs)) return;
      if (!(await signalAndWait("SIGKILL", FORCED_EXIT_WAIT_MS))) {
        throw new Error(`${binary} (pid ${child.pid}) did not exit after SIGKILL`);
      }
    },
  };
}
