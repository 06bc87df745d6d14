import { z } from "zod";

const port = z.int().min(0).max(65535);

export const natsSectionSchema = () => z
  .strictObject({
    url: z
      .url({ protocol: /^(nats|tls|wss?)$/, error: "expected a nats:// URL" })
      .default("nats://127.0.0.1:4222"),
    subjectPrefix: z
      .string()
      .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "expected NATS subject tokens without wildcards")
      .default("gw"),
    name: z.string().min(1).optional(),
    // Copies JetStream keeps of every stream and KV bucket the gateway creates: 1 on one server,
    // 3 on a 3-node cluster (a majority of 2 survives one node). Applied when a stream is created.
    replicas: z.int().min(1).max(5).default(1),
    // Streams runs' events are spread over by a hash of the run id, each with its own leader
    // (docs/scaling.md). 1 keeps the one stream `<prefix>_run_events` on `<prefix>.run.>`; more
    // use `<prefix>_run_events_<p>` on `<prefix>.runp.<p>.>`. Every process must agree on it.
    runEventPartitions: z.int().min(1).max(64).default(1),
  })
  .prefault({});

const redisUrl = z.url({ protocol: /^rediss?$/, error: "expected a redis:// or rediss:// URL" });
const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

/** What every node of a Redis Cluster must share: scheme (TLS) and credentials. */
function redisAuth(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.username}:${u.password}`;
}

export const redisSectionSchema = () => z
  .strictObject({
    // One Redis server (or a proxy in front of many).
    url: redisUrl.optional(),
    // Seed nodes of a Redis Cluster (the client learns the rest from them) instead of `url`;
    // empty: one server at `url`.
    nodes: z.array(redisUrl).default([]),
    // No braces: a `{...}` here would become every key's hash tag and put all keys on one node.
    keyPrefix: z
      .string()
      .regex(/^[^{}]*$/, "expected no { or } (they would make the prefix every key's Redis Cluster hash tag)")
      .default("gw:"),
  })
  .superRefine((redis, ctx) => {
    if (redis.url !== undefined && redis.nodes.length > 0) {
      ctx.addIssue({ code: "custom", path: ["nodes"], message: "set either redis.url (one server) or redis.nodes (a cluster), not both" });
    }
    const auth = redis.nodes.map(redisAuth);
    auth.forEach((a, i) => {
      if (a !== auth[0]) {
        ctx.addIssue({ code: "custom", path: ["nodes", i], message: "expected the same scheme and credentials on every cluster node" });
      }
    });
  })
  .transform((redis) => ({ ...redis, url: redis.url ?? DEFAULT_REDIS_URL }))
  .prefault({});

/**
 * OpenTelemetry trace export, off when absent: every service sends the spans it records (edge
 * requests, bus RPCs it serves, runs and model calls) as OTLP/HTTP JSON to `otlpEndpoint`.
 */
export const tracingSchema = () => z.strictObject({
  otlpEndpoint: z.url({ protocol: /^https?$/, error: "expected an http(s) URL of an OTLP/HTTP traces endpoint" }),
  // Each service reports as `<prefix><service>` (gateway-edge, gateway-sessions, ...).
  serviceNamePrefix: z
    .string()
    .regex(/^[A-Za-z0-9._-]*$/, "expected letters, digits, '.', '_' or '-'")
    .default("gateway-"),
  // The share of new traces recorded; a request that brings a `traceparent` keeps its sampled flag.
  sampleRatio: z.number().min(0).max(1).default(1),
});

export const opsSectionSchema = () => z
  .strictObject({
    // Where the health and metrics listeners bind; absent: where the edge binds (gateway.bind or
    // --bind), so a loopback gateway does not expose them to the network.
    bind: z.string().min(1).optional(),
    // Absent means "do not start": the embedded mode on a laptop needs neither listener.
    healthPort: port.optional(),
    metricsPort: port.optional(),
    shutdownTimeoutMs: z.int().positive().default(10_000),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    // One info line per HTTP request and per WebSocket request at the edge (request id, method,
    // outcome, duration). Off saves the edge ~a line's cost per request at very high rates.
    accessLog: z.boolean().default(true),
    tracing: tracingSchema().optional(),
  })
  .prefault({});
