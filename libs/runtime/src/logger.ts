import { hostname } from "node:os";
import { pino } from "pino";
import { createSecretScrubber, REDACTED } from "./secret-scrubber.js";
import { BatchedLineWriter } from "./batched-line-writer.js";

export type Logger = pino.Logger;

export interface LoggerOptions {
  service: string;
  /** A pino level name; "info" when absent. */
  level?: string;
  /** Configured secret values (see collectSecrets in @gw/config), scrubbed from every line. */
  secrets?: readonly string[];
  /** Where lines go; stdout when absent. */
  destination?: NodeJS.WritableStream | pino.DestinationStream;
  /** Fields added to every line at the moment it is written (the current request id). */
  mixin?: () => object;
}

/**
 * Field paths that hold credentials by convention. This is the first line of defence; the
 * scrubber below catches configured secrets wherever else they end up (messages, errors, URLs).
 */
export const REDACT_PATHS = [
  "authorization",
  "headers.authorization",
  'headers["x-gateway-token"]',
  "req.headers.authorization",
  'req.headers["x-gateway-token"]',
  "req.headers.cookie",
  "*.headers.authorization",
  'res.headers["set-cookie"]',
  "token",
  "*.token",
  "password",
  "*.password",
  "apiKey",
  "*.apiKey",
  "secret",
  "*.secret",
  "signingSecret",
  "*.signingSecret",
  "botToken",
  "*.botToken",
  "auth.*",
];

export function createLogger(opts: LoggerOptions): Logger {
  const scrub = createSecretScrubber(opts.secrets ?? []);
  const options: pino.LoggerOptions = {
    level: opts.level ?? "info",
    base: { service: opts.service, pid: process.pid, hostname: hostname() },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    hooks: { streamWrite: scrub },
    ...(opts.mixin ? { mixin: opts.mixin } : {}),
  };
  return pino(options, opts.destination ?? stdoutDestination());
}

/** What a slow reader of stdout may hold back before lines are dropped instead (bytes). */
export const STDOUT_BUFFER_BYTES = 16 * 2 ** 20;

/**
 * stdout written asynchronously: a synchronous write to a pipe whose reader is slow (a log
 * collector, a busy parent process) blocks the whole event loop, and every request with it,
 * until the pipe drains. Lines wait in a bounded buffer instead; past it they are dropped, never
 * the gateway stalled. Lines go out in batches of up to 50 ms (BatchedLineWriter).
 * Buffered lines are flushed when the process exits.
 */
function stdoutDestination(): pino.DestinationStream {
  // One per process: every logger's lines share its batches (embedded mode has several loggers).
  stdout ??= new BatchedLineWriter(pino.destination({ dest: 1, sync: false, maxLength: STDOUT_BUFFER_BYTES }));
  return stdout;
}

let stdout: BatchedLineWriter | undefined;
