import { GatewayError } from "@gw/contracts";

/**
 * Abuse limits of one WebSocket connection (docs/decisions.md "Abuse limits"). Each one bounds
 * what a single client can take from an edge: CPU and service capacity (in-flight requests) and
 * memory (the send queue of a client that does not read).
 */
export interface WsLimits {
  maxInFlight: number;
  maxSendBufferBytes: number;
}

/** The part of a `ws` socket the send-queue check needs. */
export interface BufferedSocket {
  readonly bufferedAmount: number;
}

/**
 * True when the bytes queued in user space (what the kernel would not take) already exceed the
 * cap. Checked before a send, so one large frame to a healthy client always goes through and
 * the queue of a stalled one never grows past cap + one frame.
 */
export function isSlowConsumer(socket: BufferedSocket, limits: WsLimits): boolean {
  return socket.bufferedAmount > limits.maxSendBufferBytes;
}

export function tooManyInFlight(limits: WsLimits): GatewayError {
  return new GatewayError(
    "RATE_LIMITED",
    `too many requests in flight on this connection (max ${limits.maxInFlight})`,
    { details: { limit: "maxInFlightPerConnection", max: limits.maxInFlight } },
  );
}

/**
 * Open sockets per client IP on this edge. The count is per process on purpose: a socket lives
 * in exactly one edge, and a shared counter would leak whenever an edge dies holding sockets.
 */
export class ConnectionsPerIp {
  private readonly counts = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a slot for `ip`, or throws RATE_LIMITED when the IP already holds `max`. */
  acquire(ip: string): void {
    const count = this.counts.get(ip) ?? 0;
    if (count >= this.max) {
      throw new GatewayError("RATE_LIMITED", `too many connections from this address (max ${this.max})`, {
        details: { limit: "maxConnectionsPerIp", max: this.max },
      });
    }
    this.counts.set(ip, count + 1);
  }

  release(ip: string): void {
    const count = this.counts.get(ip) ?? 0;
    if (count <= 1) this.counts.delete(ip);
    else this.counts.set(ip, count - 1);
  }

  /** Distinct IPs holding sockets (bounded by the connections themselves). */
  get size(): number {
    return this.counts.size;
  }
}
