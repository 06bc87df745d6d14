import { GatewayError } from "@gw/contracts";
import { Redis } from "ioredis";

export interface RedisConnectOptions {
  url: string;
  connectTimeoutMs?: number;
  /** Told of every failure: a command that failed, or the connection's own errors (after start). */
  onError?: RedisErrorSink;
}

export type RedisErrorSink = (kind: "command" | "connection", err: Error) => void;

/** Keeps passwords in redis://user:pass@host URLs out of error messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "<unparseable redis url>";
  }
}

/**
 * Resolves once the client is "ready". Afterwards ioredis reconnects forever with a short
 * backoff, while commands fail fast instead of queueing: a request must never hang on a
 * Redis outage, it gets UNAVAILABLE and the caller decides.
 */
export async function connectRedis(opts: RedisConnectOptions): Promise<Redis> {
  const timeoutMs = opts.connectTimeoutMs ?? 5_000;
  const client = new Redis(opts.url, {
    connectTimeout: timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 5_000,
    retryStrategy: (times) => Math.min(50 * times, 500),
    disableClientInfo: true,
    // No auto-pipelining: it holds commands until setImmediate and sends scripts and MULTI at
    // once, so writes would leave out of order, and a run's outcome could reach Redis after the
    // terminal event that announces it has reached the client (docs/decisions.md).
  });
  let lastError: Error | undefined;
  // Without a listener ioredis prints every reconnect failure to stderr.
  let started = false;
  client.on("error", (err: Error) => {
    lastError = err;
    if (started) opts.onError?.("connection", err);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.off("ready", onReady);
        reject(new Error("timed out"));
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      client.once("ready", onReady);
    });
  } catch {
    client.disconnect();
    const why = lastError === undefined ? "" : ` (last error: ${lastError.message})`;
    throw new GatewayError(
      "UNAVAILABLE",
      `cannot connect to Redis at ${redactUrl(opts.url)} within ${timeoutMs} ms${why}`,
      { cause: lastError },
    );
  }
  started = true;
  return client;
}
