import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tcpAccepts } from "./readiness.js";
import { waitFor } from "./wait-for.js";

const fixture = fileURLToPath(new URL("./fixtures/start-and-hang.ts", import.meta.url));

const refuses = async (port: number) => {
  try {
    await tcpAccepts(port);
    return undefined;
  } catch {
    return true;
  }
};

describe("servers never outlive the test process", () => {
  it("kills nats-server and redis-server when their parent is SIGKILLed", async () => {
    const parent = spawn(process.execPath, ["--import", "tsx", fixture], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    parent.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    let stdout = "";
    parent.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    const ports = await waitFor(
      () => {
        if (parent.exitCode !== null) throw new Error(`fixture exited early: ${stderr}`);
        const line = stdout.split("\n").find((l) => l.startsWith("{"));
        return line === undefined
          ? undefined
          : (JSON.parse(line) as { nats: number; redis: number; storeDir: string });
      },
      { timeoutMs: 20_000, what: "the fixture to start both servers" },
    );
    parent.kill("SIGKILL");
    try {
      await waitFor(() => refuses(ports.nats), {
        timeoutMs: 5_000,
        what: "nats-server to die with its parent",
      });
      await waitFor(() => refuses(ports.redis), {
        timeoutMs: 5_000,
        what: "redis-server to die with its parent",
      });
    } finally {
      await rm(ports.storeDir, { recursive: true, force: true });
    }
    expect(parent.signalCode).toBe("SIGKILL");
  });
});
