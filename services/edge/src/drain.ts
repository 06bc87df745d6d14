import { GatewayError } from "@gw/contracts";
import type { FastifyInstance } from "fastify";

/** The `shutdown` event's payload: what a client does when its edge is about to go. */
export interface ShutdownNotice {
  reason: string;
  /** Open a new connection (to any edge) after this long; keep this one until it closes. */
  reconnectAfterMs: number;
  /** When this edge closes its sockets at the latest (ms since the epoch). */
  closesBy: number;
}

/** Reconnects are spread over this window, so the clients of one edge do not arrive at once. */
const RECONNECT_SPREAD_MS = 2_000;
const RECONNECT_MIN_MS = 250;

/**
 * The edge's drain: once started, new work (WS requests, HTTP requests, upgrades) is refused
 * with UNAVAILABLE, and what is in flight is counted until it is done or the deadline passes.
 */
export class Drain {
  private open = 0;
  private started = false;
  private idleWaiters: Array<() => void> = [];

  get draining(): boolean {
    return this.started;
  }

  /** Throws UNAVAILABLE once the drain has begun. */
  assertAccepting(): void {
    if (this.started) throw new GatewayError("UNAVAILABLE", "this edge is shutting down: reconnect to another edge and send the request again");
  }

  /** Counts one piece of work in flight; call the returned function once when it ends. */
  track(): () => void {
    this.open++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.open--;
      if (this.open === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
  }

  get inFlight(): number {
    return this.open;
  }

  begin(): void {
    this.started = true;
  }

  /** Resolves true once nothing is in flight, false if `deadline` (ms since the epoch) comes first. */
  async idle(deadline: number): Promise<boolean> {
    if (this.open === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    });
    try {
      return await Promise.race([idle, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A notice for one client, its reconnect delay spread at random. */
  notice(closesBy: number, random = Math.random): ShutdownNotice {
    return {
      reason: "this edge is shutting down",
      reconnectAfterMs: RECONNECT_MIN_MS + Math.floor(random() * RECONNECT_SPREAD_MS),
      closesBy,
    };
  }
}

/**
 * HTTP's part of the drain: every request is counted until its response ends (an SSE stream
 * until its last chunk), and once the drain begins new requests are refused with 503 and
 * `connection: close`, except /health, which answers 503 by itself then.
 */
export function registerHttpDrain(app: FastifyInstance, drain: Drain): void {
  app.addHook("onRequest", async (request, reply) => {
    if (drain.draining && request.routeOptions.url !== "/health") {
      void reply.header("connection", "close");
      drain.assertAccepting();
    }
    reply.raw.once("close", drain.track());
  });
}
