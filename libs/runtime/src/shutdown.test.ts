import { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger, Shutdown } from "./index.js";

function setup(timeoutMs = 1_000) {
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const exit = vi.fn<(code: number) => void>();
  const shutdown = new Shutdown({ logger: createLogger({ service: "test", destination }), timeoutMs, exit });
  return { shutdown, exit, logs };
}

describe("Shutdown", () => {
  it("runs hooks in reverse order of registration, then exits 0", async () => {
    const { shutdown, exit } = setup();
    const order: string[] = [];
    shutdown.add("store", () => {
      order.push("store");
    });
    shutdown.add("bus", async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      order.push("bus");
    });
    shutdown.add("listener", () => {
      order.push("listener");
    });
    expect(shutdown.draining).toBe(false);
    const done = shutdown.run("test");
    expect(shutdown.draining).toBe(true);
    await done;
    expect(order).toEqual(["listener", "bus", "store"]);
    expect(exit).toHaveBeenCalledExactlyOnceWith(0);
  });

  it("is idempotent", async () => {
    const { shutdown, exit } = setup();
    const hook = vi.fn();
    shutdown.add("once", hook);
    const first = shutdown.run("a");
    expect(shutdown.run("b")).toBe(first);
    await first;
    await shutdown.run("c");
    expect(hook).toHaveBeenCalledOnce();
    expect(exit).toHaveBeenCalledOnce();
  });

  it("logs a failing hook and still runs the rest", async () => {
    const { shutdown, exit, logs } = setup();
    const after = vi.fn();
    shutdown.add("after", after);
    shutdown.add("sync-throw", () => {
      throw new Error("boom sync");
    });
    shutdown.add("async-throw", async () => {
      throw new Error("boom async");
    });
    await shutdown.run("test");
    expect(after).toHaveBeenCalledOnce();
    expect(exit).toHaveBeenCalledExactlyOnceWith(0);
    const failures = logs.filter((line) => line.msg === "shutdown hook failed; continuing");
    expect(failures).toEqual([
      expect.objectContaining({
        hook: "async-throw",
        err: expect.objectContaining({ message: "boom async" }),
      }),
      expect.objectContaining({ hook: "sync-throw", err: expect.objectContaining({ message: "boom sync" }) }),
    ]);
  });

  it("exits 1 at the deadline, naming the hook still running and those not started", async () => {
    const { shutdown, exit, logs } = setup(100);
    const never = vi.fn();
    shutdown.add("never-reached", never);
    shutdown.add("stuck", () => new Promise<void>(() => {}));
    shutdown.add("quick", () => {});
    await shutdown.run("test");
    expect(exit).toHaveBeenCalledExactlyOnceWith(1);
    expect(never).not.toHaveBeenCalled();
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 50, running: "stuck", notStarted: ["never-reached"], timeoutMs: 100 }),
    );
  });

  describe("onSignals", () => {
    const before = process.listeners("SIGUSR2");
    afterEach(() => {
      for (const listener of process.listeners("SIGUSR2")) {
        if (!before.includes(listener)) process.off("SIGUSR2", listener);
      }
    });

    it("starts shutdown on the first signal and forces exit 1 on the second", async () => {
      const { shutdown, exit } = setup();
      let release!: () => void;
      shutdown.add("slow", () => new Promise<void>((resolve) => (release = resolve)));
      shutdown.onSignals(["SIGUSR2"]);
      process.emit("SIGUSR2", "SIGUSR2");
      expect(shutdown.draining).toBe(true);
      expect(exit).not.toHaveBeenCalled();
      process.emit("SIGUSR2", "SIGUSR2");
      expect(exit).toHaveBeenCalledExactlyOnceWith(1);
      release();
      await shutdown.run("already running");
      expect(exit).toHaveBeenLastCalledWith(0);
    });
  });
});
