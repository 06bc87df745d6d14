import { z } from "zod";

const port = z.int().min(0).max(65535);

export const NatsSectionSchema = z
  .strictObject({
    url: z
      .url({ protocol: /^(nats|tls|wss?)$/, error: "expected a nats:// URL" })
      .default("nats://127.0.0.1:4222"),
    subjectPrefix: z
      .string()
      .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "expected NATS subject tokens without wildcards")
      .default("gw"),
    name: z.string().min(1).optional(),
  })
  .prefault({});

export const RedisSectionSchema = z
  .strictObject({
    url: z
      .url({ protocol: /^rediss?$/, error: "expected a redis:// or rediss:// URL" })
      .default("redis://127.0.0.1:6379"),
    keyPrefix: z.string().default("gw:"),
  })
  .prefault({});

export const OpsSectionSchema = z
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
  })
  .prefault({});
