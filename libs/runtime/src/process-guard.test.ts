import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const FAULTY = fileURLToPath(new URL("../test/faulty-process.ts", import.meta.url));

/** Runs the faulty process under `policy` to its end: its exit code and what it wrote. */
function runFaulty(policy: string): Promise<{ code: number | null; stdout: string; logs: Array<Record<string, unknown>> }> {
  const child = spawn(process.execPath, ["--import", "tsx", FAULTY, policy], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      const logs = out
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, stdout: out, logs });
    });
  });
}

describe("guardProcess", () => {
  it("keep-serving (embedded): logs each fault at error with the request that caused it, counts it, and serves on", async () => {
    const { code, stdout, logs } = await runFaulty("keep-serving");
    expect(code).toBe(0);
    expect(stdout).toContain("SERVING AFTER THE FAULTS");
    const faults = logs.filter((line) => line.fault !== undefined);
    expect(faults).toEqual([
      expect.objectContaining({ level: 50, fault: "unhandled_rejection", reqId: "req_fault", err: expect.objectContaining({ message: "a read nobody waited for failed" }) }),
      expect.objectContaining({ level: 50, fault: "uncaught_exception", reqId: "req_fault", err: expect.objectContaining({ message: "a callback threw" }) }),
    ]);
    expect(stdout).toMatch(/gw_process_faults_total\{kind="unhandled_rejection"[^}]*\} 1\n/);
    expect(stdout).toMatch(/gw_process_faults_total\{kind="uncaught_exception"[^}]*\} 1\n/);
  });

  it("exit (distributed): serves on after a rejection, but drains and exits 1 after an uncaught exception", async () => {
    const { code, stdout, logs } = await runFaulty("exit");
    expect(code).toBe(1);
    expect(stdout).not.toContain("SERVING AFTER THE FAULTS");
    expect(logs.map((line) => line.fault ?? line.msg)).toEqual([
      "unhandled_rejection",
      "uncaught_exception",
      "shutting down",
      "server closed",
      "shutdown complete",
    ]);
  });
});
