import type { Logger } from "./logger.js";

export interface ShutdownHook {
  name: string;
  run: () => Promise<void> | void;
}

export interface ShutdownOptions {
  logger: Logger;
  /** The whole shutdown, all hooks together, must finish within this. */
  timeoutMs: number;
  /** Injectable for tests; process.exit otherwise. */
  exit?: (code: number) => void;
}

type Outcome = { kind: "done" } | { kind: "failed"; error: unknown } | { kind: "deadline" };

/**
 * Graceful shutdown with one deadline. Hooks stop in reverse order of registration, so what
 * started last (the listener taking traffic) stops first and what it uses (bus, stores) last.
 */
export class Shutdown {
  readonly #logger: Logger;
  readonly #timeoutMs: number;
  readonly #exit: (code: number) => void;
  readonly #hooks: ShutdownHook[] = [];
  #running: Promise<void> | undefined;

  constructor(opts: ShutdownOptions) {
    this.#logger = opts.logger;
    this.#timeoutMs = opts.timeoutMs;
    this.#exit = opts.exit ?? ((code) => process.exit(code));
  }

  /** True once shutdown has begun; health probes report NOT_SERVING from then on. */
  get draining(): boolean {
    return this.#running !== undefined;
  }

  add(name: string, run: () => Promise<void> | void): void {
    this.#hooks.push({ name, run });
  }

  /** The first signal starts a graceful shutdown; a second one means "now" and exits with 1. */
  onSignals(signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM"]): void {
    for (const signal of signals) {
      process.on(signal, () => {
        if (this.draining) {
          this.#logger.warn({ signal }, "second signal during shutdown, exiting now");
          this.#exit(1);
          return;
        }
        // #runHooks catches every hook's failure and exits: nothing is left to reject.
        void this.run(`signal ${signal}`).catch((err: unknown) => this.#logger.error({ err }, "shutdown failed"));
      });
    }
  }

  /** Runs every hook once, then exits with `exitCode` (1 when the deadline passes first). */
  run(reason: string, exitCode = 0): Promise<void> {
    this.#running ??= this.#runHooks(reason, exitCode);
    return this.#running;
  }

  async #runHooks(reason: string, exitCode: number): Promise<void> {
    const deadline = Date.now() + this.#timeoutMs;
    const hooks = [...this.#hooks].reverse();
    this.#logger.info(
      { reason, hooks: hooks.map((hook) => hook.name), timeoutMs: this.#timeoutMs },
      "shutting down",
    );
    for (const [i, hook] of hooks.entries()) {
      const outcome = await runBounded(hook, deadline - Date.now());
      if (outcome.kind === "deadline") {
        this.#logger.error(
          {
            running: hook.name,
            notStarted: hooks.slice(i + 1).map((h) => h.name),
            timeoutMs: this.#timeoutMs,
          },
          "shutdown deadline passed; exiting with hooks still running",
        );
        this.#exit(1);
        return;
      }
      if (outcome.kind === "failed") {
        this.#logger.error({ hook: hook.name, err: outcome.error }, "shutdown hook failed; continuing");
      }
    }
    this.#logger.info({ reason }, "shutdown complete");
    this.#exit(exitCode);
  }
}

async function runBounded(hook: ShutdownHook, remainingMs: number): Promise<Outcome> {
  if (remainingMs <= 0) return { kind: "deadline" };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "deadline" }), remainingMs);
  });
  // new Promise(...) turns a synchronous throw into a rejection like an async one.
  const work = new Promise<void>((resolve) => resolve(hook.run())).then(
    (): Outcome => ({ kind: "done" }),
    (error: unknown): Outcome => ({ kind: "failed", error }),
  );
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
