import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";

/** The soft RLIMIT_NOFILE of this process (children inherit it). */
export function openFileLimit(): number {
  const line = readFileSync("/proc/self/limits", "utf8")
    .split("\n")
    .find((l) => l.startsWith("Max open files"));
  const soft = Number(line?.split(/\s{2,}/)[1]);
  return Number.isFinite(soft) ? soft : 1024;
}

function rssKiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return out;
}

/** RSS in bytes of a process and all its descendants (tsx runs the real program as a child). */
export function treeRssBytes(pid: number): number {
  let total = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const next = stack.pop()!;
    total += rssKiB(next);
    stack.push(...childrenOf(next));
  }
  return total * 1024;
}

/** What the report says about the machine, so numbers from different runs can be compared. */
export function machineInfo(): Record<string, unknown> {
  let commit = "";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    // not a checkout
  }
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    loadAverage1m: loadavg()[0],
    openFileLimit: openFileLimit(),
    commit,
  };
}

/** CPU time (user + system) a process has used so far, in microseconds; 0 when it is gone. */
export function cpuMicros(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** The kernel's clock ticks per second for /proc times (USER_HZ: 100 on Linux everywhere). */
const CLOCK_TICKS = 100;
