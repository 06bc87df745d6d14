import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";

/**
 * What a process does after an uncaught exception (docs/decisions.md, "Process faults"):
 * - `keep-serving`: log it, count it, go on. The embedded gateway has no supervisor to restart
 *   it, and exiting would end every client's connection and run for one bad request.
 * - `exit`: log it, count it, then drain gracefully and exit with 1, for the supervisor
 *   (Kubernetes, compose) to start a fresh replica while the others serve. A throw that escaped
 *   every handler may have left this process's state half-changed.
 * An unhandled rejection never ends a process: it is a promise its creator stopped waiting for,
 * so no code was cut off halfway; it is logged and counted in both modes.
 */
export type UncaughtExceptionPolicy = "keep-serving" | "exit";

export interface ProcessGuardOptions {
  logger: Logger;
  metrics: Metrics;
  onUncaughtException: UncaughtExceptionPolicy;
  /** Starts the graceful shutdown with this exit code (`exit` policy only). */
  shutdown: (reason: string, exitCode: number) => unknown;
}

export type ProcessFaultKind = "unhandled_rejection" | "uncaught_exception";

/**
 * Installs the process-level handlers for faults nothing else caught. The handlers run in the
 * failing promise's or callback's async context, so the log line carries the request id of the
 * request that caused it (the logger's mixin reads it). Returns a function that removes them.
 */
export function guardProcess(opts: ProcessGuardOptions): () => void {
  const faults = opts.metrics.counter({
    name: "gw_process_faults_total",
    help: "Errors that escaped every handler: unhandled promise rejections and uncaught exceptions",
    labelNames: ["kind"] as const,
  });
  const onRejection = (reason: unknown) => {
    faults.inc({ kind: "unhandled_rejection" });
    opts.logger.error({ err: reason, fault: "unhandled_rejection" }, "unhandled promise rejection; still serving");
  };
  const onException = (err: unknown) => {
    faults.inc({ kind: "uncaught_exception" });
    if (opts.onUncaughtException === "keep-serving") {
      opts.logger.error({ err, fault: "uncaught_exception" }, "uncaught exception; still serving");
      return;
    }
    opts.logger.error({ err, fault: "uncaught_exception" }, "uncaught exception; draining and exiting for a restart");
    opts.shutdown("uncaught exception", 1);
  };
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  return () => {
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onException);
  };
}
