/**
 * A client of the gateway's WebSocket protocol (docs/protocol.md): numbered requests, one answer
 * each (in any order), and events in between. It speaks to the standard WebSocket interface, so
 * the same code runs in a browser (the web chat) and in Node with the `ws` package.
 */
import type { MethodName, MethodResultOf } from "@gw/contracts";

/** The part of the standard WebSocket interface this client uses (browsers' and `ws`'s both fit). */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open" | "close" | "error" | "message", listener: (event: { data?: unknown; code?: number; reason?: string }) => void): void;
}

export type SocketFactory = (url: string) => SocketLike;

/** An error answer: the catalogue code (docs/errors.md), its message and any details. */
export class GatewayRpcError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "GatewayRpcError";
  }
}

export type EventListener = (event: string, payload: Record<string, unknown>) => void;

interface Pending {
  resolve(payload: unknown): void;
  reject(err: Error): void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const OPEN = 1;
const DEFAULT_TIMEOUT_MS = 30_000;

export interface RequestOptions {
  /** Gives up on the answer (GatewayRpcError `TIMEOUT`) after this long; 0 waits for ever. */
  timeoutMs?: number;
}

export class GatewayClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly eventListeners = new Set<EventListener>();
  private readonly closeListeners = new Set<(code: number, reason: string) => void>();
  private closed = false;

  private constructor(private readonly socket: SocketLike) {
    socket.addEventListener("message", (event) => this.handleMessage(event.data));
    socket.addEventListener("close", (event) => this.handleClose(event.code ?? 1006, event.reason ?? ""));
  }

  /** Opens a socket and resolves once it is open (no `connect` request is sent yet). */
  static open(url: string, factory: SocketFactory): Promise<GatewayClient> {
    return new Promise((resolve, reject) => {
      const socket = factory(url);
      let settled = false;
      socket.addEventListener("open", () => {
        settled = true;
        resolve(new GatewayClient(socket));
      });
      const fail = (what: string) => () => {
        if (settled) return;
        settled = true;
        reject(new GatewayRpcError("UNAVAILABLE", `cannot open ${url}: ${what}`));
      };
      socket.addEventListener("error", fail("connection failed"));
      socket.addEventListener("close", fail("closed before it opened"));
    });
  }

  get isOpen(): boolean {
    return !this.closed && this.socket.readyState === OPEN;
  }

  /**
   * Sends one request; resolves with its `payload`, typed by the method's result schema
   * (METHOD_RESULTS in @gw/contracts), or rejects with a GatewayRpcError.
   */
  request<M extends MethodName>(method: M, params: object = {}, opts: RequestOptions = {}): Promise<MethodResultOf<M>> {
    if (!this.isOpen) return Promise.reject(new GatewayRpcError("UNAVAILABLE", "the connection is closed"));
    const id = this.nextId++;
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise<MethodResultOf<M>>((resolve, reject) => {
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              this.pending.delete(id);
              reject(new GatewayRpcError("TIMEOUT", `no answer to ${method} within ${timeoutMs} ms`));
            }, timeoutMs)
          : undefined;
      // The gateway answers M with METHOD_RESULTS[M] (an e2e parses every method's real answers,
      // gateway/test/method-results.e2e.test.ts); the client trusts it instead of shipping zod to browsers.
      this.pending.set(id, { resolve: resolve as (payload: unknown) => void, reject, timer });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  /** Every event frame, until the returned function is called. */
  onEvent(listener: EventListener): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onClose(listener: (code: number, reason: string) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  close(code = 1000, reason = ""): void {
    this.socket.close(code, reason);
  }

  private handleMessage(data: unknown): void {
    if (typeof data !== "string") return;
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return; // the gateway sends JSON only; anything else is not ours to answer
    }
    if (typeof frame.event === "string") {
      const payload = (frame.payload ?? {}) as Record<string, unknown>;
      for (const listener of this.eventListeners) listener(frame.event, payload);
      return;
    }
    if (typeof frame.id !== "number") return;
    const pending = this.pending.get(frame.id);
    if (pending === undefined) return;
    this.pending.delete(frame.id);
    if (pending.timer !== undefined) clearTimeout(pending.timer);
    if (frame.ok === true) {
      pending.resolve(frame.payload ?? {});
      return;
    }
    const error = (frame.error ?? {}) as { code?: unknown; message?: unknown; details?: unknown };
    pending.reject(
      new GatewayRpcError(
        typeof error.code === "string" ? error.code : "INTERNAL",
        typeof error.message === "string" ? error.message : "the gateway answered with an error",
        typeof error.details === "object" && error.details !== null ? (error.details as Record<string, unknown>) : undefined,
      ),
    );
  }

  private handleClose(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      if (pending.timer !== undefined) clearTimeout(pending.timer);
      pending.reject(new GatewayRpcError("UNAVAILABLE", `the connection closed (${code}${reason ? `: ${reason}` : ""})`));
    }
    for (const listener of this.closeListeners) listener(code, reason);
  }
}
