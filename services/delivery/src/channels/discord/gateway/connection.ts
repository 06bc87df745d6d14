import { WebSocket } from "ws";
import { GATEWAY_VERSION, HelloSchema, OP, PayloadSchema, ReadySchema, RESUMABLE_CLOSE, closeVerdict } from "./protocol.js";

/** A Gateway session: what RESUME needs, kept as the receiver's cursor. */
export interface SessionState {
  sessionId: string;
  /** The last dispatch's `s`. */
  seq: number;
  resumeUrl: string;
}

export type GatewayEvent =
  | { kind: "ready"; session: SessionState; userId: string }
  | { kind: "resumed"; s: number }
  | { kind: "dispatch"; t: string; s: number; d: unknown };

/** How a connection ended, and what the next one should do. */
export interface ConnectionEnd {
  next: "resume" | "identify" | "fatal";
  reason: string;
  /** Whether it got as far as READY or RESUMED (a healthy connection resets the backoff). */
  established: boolean;
  /** Discord asks for 1-5 s before the next IDENTIFY after an invalid session. */
  waitMs?: number;
}

export interface ConnectionOptions {
  /** The gateway URL to IDENTIFY on; a session is resumed on its own `resumeUrl`. */
  url: string;
  token: string;
  intents: number;
  /** Resume this session instead of identifying. */
  session?: SessionState;
  signal: AbortSignal;
  /** HELLO must arrive within this long after connecting. */
  helloTimeoutMs: number;
  random: () => number;
}

/** How long a socket may take to close before it is cut. */
const CLOSE_GRACE_MS = 3_000;

/**
 * One WebSocket to the Gateway, from HELLO to close: heartbeats (the first after a random part
 * of the interval, as Discord asks, then every interval; a beat whose predecessor was never
 * acknowledged means a zombie connection, which is cut), IDENTIFY or RESUME, and every dispatch
 * buffered for the reader. `next()` hands out what arrived since the last call, then how the
 * connection ended once it has closed.
 */
export class GatewayConnection {
  private readonly socket: WebSocket;
  private readonly buffer: GatewayEvent[] = [];
  private wake: (() => void) | undefined;
  private ended: ConnectionEnd | undefined;
  /** The verdict of a close this client started (RECONNECT, invalid session, zombie, stop). */
  private leaving: Omit<ConnectionEnd, "established"> | undefined;
  private established = false;
  private seq: number | null;
  private acked = true;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private lastError = "";

  constructor(private readonly opts: ConnectionOptions) {
    this.seq = opts.session?.seq ?? null;
    const url = new URL(opts.session?.resumeUrl ?? opts.url);
    url.searchParams.set("v", GATEWAY_VERSION);
    url.searchParams.set("encoding", "json");
    this.socket = new WebSocket(url, { handshakeTimeout: opts.helloTimeoutMs });
    this.after(opts.helloTimeoutMs, () => {
      if (this.heartbeat === undefined) this.leave({ next: "resume", reason: "no HELLO from the gateway in time" }, "cut");
    });
    this.socket.on("message", (data) => this.onMessage(String(data)));
    this.socket.on("error", (err) => (this.lastError = err.message));
    this.socket.on("close", (code) => this.onClose(code));
    opts.signal.addEventListener("abort", this.onAbort, { once: true });
  }

  /** The events that arrived since the last call (waiting for one), or the end once closed. */
  async next(): Promise<GatewayEvent[] | ConnectionEnd> {
    while (this.buffer.length === 0 && this.ended === undefined) {
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    if (this.buffer.length > 0) return this.buffer.splice(0);
    return this.ended!;
  }

  private readonly onAbort = () => this.leave({ next: "resume", reason: "stopped" }, "close");

  private push(event: GatewayEvent): void {
    this.buffer.push(event);
    this.wake?.();
  }

  private send(payload: unknown): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(payload));
  }

  private after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }

  private onMessage(text: string): void {
    let payload;
    try {
      payload = PayloadSchema.parse(JSON.parse(text));
    } catch {
      return; // Not a gateway payload: nothing to act on.
    }
    if (typeof payload.s === "number") this.seq = payload.s;
    switch (payload.op) {
      case OP.hello:
        return this.onHello(payload.d);
      case OP.heartbeatAck:
        this.acked = true;
        return;
      case OP.heartbeat:
        return this.send({ op: OP.heartbeat, d: this.seq });
      case OP.reconnect:
        return this.leave({ next: "resume", reason: "Discord asked to reconnect" }, "close");
      case OP.invalidSession: {
        const waitMs = 1_000 + Math.round(this.opts.random() * 4_000);
        if (payload.d === true) return this.leave({ next: "resume", reason: "invalid session (resumable)", waitMs }, "close");
        return this.leave({ next: "identify", reason: "invalid session: identifying anew", waitMs }, "close");
      }
      case OP.dispatch:
        return this.onDispatch(payload.t ?? "", payload.s ?? 0, payload.d);
    }
  }

  private onHello(d: unknown): void {
    const hello = HelloSchema.safeParse(d);
    if (!hello.success || this.heartbeat !== undefined) return;
    const interval = hello.data.heartbeat_interval;
    this.heartbeat = setTimeout(() => {
      this.beat();
      this.heartbeat = setInterval(() => this.beat(), interval);
    }, Math.round(interval * this.opts.random()));
    const session = this.opts.session;
    if (session !== undefined) {
      this.send({ op: OP.resume, d: { token: this.opts.token, session_id: session.sessionId, seq: session.seq } });
    } else {
      const properties = { os: process.platform, browser: "agent-gateway", device: "agent-gateway" };
      this.send({ op: OP.identify, d: { token: this.opts.token, intents: this.opts.intents, properties } });
    }
  }

  private beat(): void {
    if (!this.acked) {
      this.leave({ next: "resume", reason: "no heartbeat ACK: the connection is a zombie" }, "cut");
      return;
    }
    this.acked = false;
    this.send({ op: OP.heartbeat, d: this.seq });
  }

  private onDispatch(t: string, s: number, d: unknown): void {
    if (t === "READY") {
      const ready = ReadySchema.safeParse(d);
      if (!ready.success) return this.leave({ next: "identify", reason: "READY without a session" }, "close");
      this.established = true;
      const session = { sessionId: ready.data.session_id, seq: s, resumeUrl: ready.data.resume_gateway_url };
      return this.push({ kind: "ready", session, userId: ready.data.user.id });
    }
    if (t === "RESUMED") {
      this.established = true;
      return this.push({ kind: "resumed", s });
    }
    this.push({ kind: "dispatch", t, s, d });
  }

  /** Ends the connection on our side: a resumable close code, or a cut for a dead peer. */
  private leave(verdict: Omit<ConnectionEnd, "established">, how: "close" | "cut"): void {
    if (this.leaving !== undefined || this.ended !== undefined) return;
    this.leaving = verdict;
    if (how === "cut" || this.socket.readyState !== WebSocket.OPEN) this.socket.terminate();
    else {
      this.socket.close(RESUMABLE_CLOSE, verdict.reason.slice(0, 120));
      this.after(CLOSE_GRACE_MS, () => this.socket.terminate());
    }
  }

  private onClose(code: number): void {
    this.opts.signal.removeEventListener("abort", this.onAbort);
    clearTimeout(this.heartbeat);
    clearInterval(this.heartbeat);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const detail = this.lastError === "" ? `closed with ${code}` : `closed with ${code} (${this.lastError})`;
    const closed = closeVerdict(code);
    const verdict = this.leaving ?? { next: closed.next, reason: closed.next === "fatal" ? closed.reason : `the gateway ${detail}` };
    this.ended = { ...verdict, established: this.established };
    this.wake?.();
  }
}
