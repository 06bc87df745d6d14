import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface BenchProcess {
  child: ChildProcess;
  /** Resolves with the first stdout line matching `pattern` (bounded). */
  waitLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs a bench file in its own Node process: TypeScript with tsx as a loader (so the pid is the
 * program itself and its RSS is what we measure), plain `.mjs` without any loader.
 */
export function spawnBench(file: string, args: string[] = [], env: Record<string, string> = {}): BenchProcess {
  // GW_CPU_PROF_DIR=<dir>: every bench process writes a V8 CPU profile there when it exits.
  const profile = process.env.GW_CPU_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.GW_CPU_PROF_DIR}`] : [];
  const loader = file.endsWith(".mjs") ? [] : ["--import", "tsx"];
  const child = spawn(process.execPath, [...profile, ...loader, `${ROOT}bench/${file}`, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const listeners = new Set<() => void>();
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-50_000);
    for (const l of listeners) l();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    output: () => output,
    waitLine: (pattern, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = output.match(pattern);
          if (match) {
            done();
            resolve(match);
          } else if (child.exitCode !== null) {
            done();
            reject(new Error(`${file} exited:\n${output}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${file} never printed ${pattern} within ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off("exit", check);
        };
        listeners.add(check);
        child.once("exit", check);
        check();
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(force);
    },
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
