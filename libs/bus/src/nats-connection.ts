import type { NatsConnection } from "@nats-io/nats-core";

export interface NatsConnectOptions {
  url: string;
  name?: string;
  /** How long the first connection may take before start-up fails. */
  connectTimeoutMs?: number;
}

/**
 * Connects once for the whole process (bus and JetStream stores share it) and keeps
 * reconnecting forever afterwards: a NATS restart must not take a service down.
 */
export async function connectNats(opts: NatsConnectOptions): Promise<NatsConnection> {
  // The transport is loaded by the first connection: embedded mode never makes one.
  const { connect } = await import("@nats-io/transport-node");
  try {
    return await connect({
      servers: opts.url,
      name: opts.name,
      timeout: opts.connectTimeoutMs ?? 5_000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 10_000,
      // Capturing an async stack for every request cost about a third of a busy service's CPU;
      // our errors carry the subject and the typed code instead.
      noAsyncTraces: true,
    });
  } catch (cause) {
    throw new Error(`cannot connect to NATS at ${opts.url}: ${(cause as Error).message}`, { cause });
  }
}
