import { spawn } from "node:child_process";

/**
 * Runs `promtool check metrics` (Debian's `prometheus` package) on an exposition: the linter
 * Prometheus itself uses for names, types, units and help. "missing" when promtool is not
 * installed. For the tests that check every service's /metrics.
 */
export function promtoolCheck(exposition: string): Promise<{ ok: boolean; output: string } | "missing"> {
  return new Promise((resolve, reject) => {
    const child = spawn("promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", (err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? resolve("missing") : reject(err)));
    child.once("close", (code) => resolve({ ok: code === 0, output: output.trim() }));
    child.stdin.on("error", () => {});
    child.stdin.end(exposition);
  });
}
