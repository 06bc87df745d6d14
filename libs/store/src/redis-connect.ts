import { GatewayError } from "@gw/contracts";
import type { Cluster, Redis, RedisOptions } from "ioredis";
import { coalesceWrites } from "./coalesced-writes.js";

/** One server, or a Redis Cluster (the same commands; multi-key ones only within one slot). */
export type RedisClient = Redis | Cluster;

export const isCluster = (client: RedisClient): client is Cluster => client.isCluster;

export interface RedisConnectOptions {
  /** One server's URL; also names the client in errors when `nodes` are given. */
  url: string;
  /** Seed nodes of a Redis Cluster (same scheme and credentials on each); empty: one server at `url`. */
  nodes?: readonly string[];
  connectTimeoutMs?: number;
  /** Told of every failure: a command that failed, or the connection's own errors (after start). */
  onError?: RedisErrorSink;
  /**
   * Send the commands issued within one turn of the event loop in one write per connection
   * (`coalesceWrites`), in order. For callers that await a write before anything depends on it.
   */
  coalesceWrites?: boolean;
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

const RETRY = (times: number) => Math.min(50 * times, 500);

/** Per-connection settings shared by a single client and every node connection of a cluster. */
function connectionOptions(timeoutMs: number): RedisOptions {
  return {
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    commandTimeout: 5_000,
    disableClientInfo: true,
    // No auto-pipelining: it holds commands until setImmediate and sends scripts and MULTI at
    // once, so writes would leave out of order, and a run's outcome could reach Redis after the
    // terminal event that announces it has reached the client (docs/decisions.md).
  };
}

/** ioredis (about 20 MiB resident) is loaded by the first connection: embedded mode never does. */
async function createClient(opts: RedisConnectOptions, timeoutMs: number): Promise<RedisClient> {
  const { Cluster, Redis } = await import("ioredis");
  const nodes = opts.nodes ?? [];
  if (nodes.length === 0) {
    return new Redis(opts.url, { ...connectionOptions(timeoutMs), enableOfflineQueue: false, retryStrategy: RETRY });
  }
  const first = new URL(nodes[0]!);
  return new Cluster(
    nodes.map((node) => {
      const u = new URL(node);
      return { host: u.hostname, port: u.port === "" ? 6379 : Number(u.port) };
    }),
    {
      redisOptions: {
        ...connectionOptions(timeoutMs),
        ...(first.username !== "" ? { username: decodeURIComponent(first.username) } : {}),
        ...(first.password !== "" ? { password: decodeURIComponent(first.password) } : {}),
        ...(first.protocol === "rediss:" ? { tls: {} } : {}),
      },
      enableOfflineQueue: false,
      clusterRetryStrategy: RETRY,
      // Reads go to the slot's master: a replica may not have the write this process just made.
      scaleReads: "master",
    },
  );
}

/**
 * A cluster client connects to each master on its first command and queues commands meanwhile,
 * and ioredis lets some of them overtake the queue: the first writes to a node could apply out
 * of order. Connecting every master before use keeps the FastStore's per-slot write order.
 */
async function connectMasters(client: Cluster, timeoutMs: number, opts: RedisConnectOptions): Promise<void> {
  try {
    await Promise.all(client.nodes("master").map((node) => node.ping()));
  } catch (cause) {
    client.disconnect();
    throw new GatewayError("UNAVAILABLE", `cannot reach every master of ${where(opts)} within ${timeoutMs} ms`, { cause });
  }
}

/** Every connection of the client, reconnections and a cluster's later nodes included. */
function coalesceEveryConnection(client: RedisClient): void {
  const watch = (redis: Redis) => {
    redis.on("connect", () => coalesceWrites(redis.stream));
    if (redis.stream !== undefined) coalesceWrites(redis.stream);
  };
  if (isCluster(client)) {
    client.on("+node", watch);
    for (const node of client.nodes()) watch(node);
  } else watch(client);
}

function where(opts: RedisConnectOptions): string {
  const nodes = opts.nodes ?? [];
  return nodes.length === 0 ? redactUrl(opts.url) : `the cluster nodes ${nodes.map(redactUrl).join(", ")}`;
}

/**
 * Resolves once the client is "ready". Afterwards ioredis reconnects forever with a short
 * backoff, while commands fail fast instead of queueing: a request must never hang on a
 * Redis outage, it gets UNAVAILABLE and the caller decides.
 */
export async function connectRedis(opts: RedisConnectOptions): Promise<RedisClient> {
  const timeoutMs = opts.connectTimeoutMs ?? 5_000;
  const client = await createClient(opts, timeoutMs);
  if (opts.coalesceWrites) coalesceEveryConnection(client);
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
      `cannot connect to Redis at ${where(opts)} within ${timeoutMs} ms${why}`,
      { cause: lastError },
    );
  }
  if (isCluster(client)) await connectMasters(client, timeoutMs, opts);
  started = true;
  return client;
}
