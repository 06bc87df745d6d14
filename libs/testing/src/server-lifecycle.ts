import type { LaunchServer, RunningServer } from "./running-server.js";
import { waitFor } from "./wait-for.js";

export interface ServerLifecycleOptions {
  /** Used in error messages, e.g. "nats-server on port 41234". */
  name: string;
  launch: LaunchServer;
  /** Resolves true once clients can use the server; throws or returns false while booting. */
  ready(): Promise<boolean>;
  startTimeoutMs?: number;
  stopGraceMs?: number;
  /** Runs before every (re)start, e.g. to recreate a store dir that stop() removed. */
  prepare?(): Promise<void>;
  /** Runs on stop() only: kill() keeps state so that start() can pick it up again. */
  cleanup?(): Promise<void>;
}

export class StartupError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(output.trim() === "" ? message : `${message}\n--- server output (tail) ---\n${output.trimEnd()}`);
    this.name = "StartupError";
  }
}

/** Start, kill, restart and stop one server, with bounded waits at every step. */
export class ServerLifecycle {
  private running: RunningServer | undefined;

  constructor(private readonly opts: ServerLifecycleOptions) {}

  async start(): Promise<void> {
    if (this.running !== undefined) throw new Error(`${this.opts.name} is already running`);
    await this.opts.prepare?.();
    const server = await this.opts.launch();
    this.running = server;
    const timeoutMs = this.opts.startTimeoutMs ?? 15_000;
    try {
      const outcome = await waitFor(
        async () => {
          const reason = server.exitReason();
          if (reason !== undefined) return { failed: reason };
          return (await this.opts.ready()) ? { failed: undefined } : undefined;
        },
        { timeoutMs, intervalMs: 50, what: `${this.opts.name} to become ready` },
      );
      if (outcome.failed !== undefined) throw new Error(`${this.opts.name} ${outcome.failed}`);
    } catch (err) {
      this.running = undefined;
      await server.kill("SIGKILL").catch(() => {});
      throw new StartupError((err as Error).message, server.output());
    }
  }

  /** Abrupt death (SIGKILL by default), as in a crash; state on disk is kept. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const server = this.running;
    this.running = undefined;
    await server?.kill(signal);
  }

  /** Graceful shutdown plus cleanup of what the harness created; safe to call twice. */
  async stop(): Promise<void> {
    const server = this.running;
    this.running = undefined;
    try {
      await server?.terminate(this.opts.stopGraceMs ?? 5_000);
    } finally {
      await this.opts.cleanup?.();
    }
  }

  isRunning(): boolean {
    return this.running !== undefined;
  }
}
