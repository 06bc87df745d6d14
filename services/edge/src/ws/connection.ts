import { randomUUID } from "node:crypto";
import { beginSpan, runInTrace, startSpan } from "@gw/bus";
import { type FrameId, GatewayError, isEncodedJson, type Role } from "@gw/contracts";
import type { Logger, Metrics, Tally } from "@gw/runtime";
import { type EventFamily, mayReceive, seesErrorDetail } from "../auth/permissions.js";
import type { EventHub, EventTarget } from "../events/event-hub.js";
import { type MethodResult, PayloadWithMeta } from "../methods/registry.js";
import type { Drain, ShutdownNotice } from "../drain.js";
import { ConnectHandshake, type HandshakeDeps, type UpgradeInfo, welcome } from "./connect-handshake.js";
import { ConnectionContext } from "./connection-context.js";
import { type EdgeSocket, onSocketClose, onSocketError, onSocketMessage } from "./edge-socket.js";
import { encodedSuccessFrame } from "../encoded-frames.js";
import { errorFrame, parseRequestFrame, successFrame } from "./frames.js";
import { isSlowConsumer, tooManyInFlight, type WsLimits } from "./limits.js";
import { corkForTurn } from "./socket-corks.js";

export interface ConnectionDeps extends HandshakeDeps {
  metrics: Metrics;
  events: EventHub;
  preConnectTimeoutMs: number;
  limits: WsLimits;
  /** Called once when the socket has closed. */
  onClose(conn: Connection): void;
  /** Counts event frames written to sockets. */
  eventsDelivered: Tally;
  /** One info line per request (ops.accessLog). */
  accessLog: boolean;
  /** Counts requests in flight, and refuses new ones once the edge drains. */
  drain: Drain;
}

/**
 * One WebSocket client: `connect` first, then registry-dispatched requests, plus events. Before
 * `connect` succeeds its state is the handshake (ws/connect-handshake.ts); after, the context
 * every method call of this connection gets, made once at connect.
 */
export class Connection implements EventTarget {
  readonly id = randomUUID();
  private state: ConnectHandshake | ConnectionContext;
  readonly clientIp: string;
  /** Before `connect`: the pre-connect timeout; after, a deadline a method set (a pairing request's). */
  private deadline: NodeJS.Timeout | undefined;
  private childLogger: Logger | undefined;
  private inFlight = 0;
  /** What methods asked to run when the socket closes (rare: made on first use). */
  private cleanups: Array<() => void> | undefined;
  private socketClosed = false;

  constructor(
    private readonly socket: EdgeSocket,
    upgrade: UpgradeInfo,
    readonly deps: ConnectionDeps,
  ) {
    this.clientIp = upgrade.clientIp;
    this.state = new ConnectHandshake(upgrade);
    this.deadline = setTimeout(() => {
      if (this.context === undefined) socket.close(4008, "connect timeout");
    }, deps.preConnectTimeoutMs);
    this.deadline.unref();
    socket.connection = this;
    socket.on("message", onSocketMessage);
    socket.on("close", onSocketClose);
    socket.on("error", onSocketError);
  }

  /** The socket has closed: forget the connection everywhere (called once, by the socket). */
  closed(): void {
    this.socketClosed = true;
    clearTimeout(this.deadline);
    this.deps.events.remove(this.id);
    const device = this.context?.principal.device;
    if (device !== undefined) {
      this.deps.devices.links.detach(this.id, device.deviceId);
    }
    for (const cleanup of this.cleanups?.splice(0) ?? []) {
      try {
        cleanup();
      } catch (err) {
        this.logger.warn({ err }, "a connection cleanup failed");
      }
    }
    this.deps.onClose(this);
  }

  get isClosed(): boolean {
    return this.socketClosed;
  }

  onClose(cleanup: () => void): void {
    if (this.isClosed) cleanup();
    else (this.cleanups ??= []).push(cleanup);
  }

  setDeadline(ms: number, onEnd: () => void): void {
    clearTimeout(this.deadline);
    if (this.isClosed) return;
    this.deadline = setTimeout(onEnd, ms);
    this.deadline.unref();
  }

  socketError(err: Error): void {
    this.logger.debug({ err }, "socket error");
  }

  /**
   * The connection's logger, made on first use: most connections never log after `connected`,
   * and an idle connection should cost as little memory as the socket itself.
   */
  private get logger(): Logger {
    this.childLogger ??= this.deps.logger.child({ connId: this.id, clientIp: this.clientIp });
    return this.childLogger;
  }

  /** What method calls get, once `connect` has succeeded. */
  private get context(): ConnectionContext | undefined {
    return this.state instanceof ConnectionContext ? this.state : undefined;
  }

  get role(): Role | undefined {
    return this.context?.role;
  }

  /** Whether this connection may receive events of `family` (auth/permissions.ts). */
  accepts(family: EventFamily): boolean {
    const context = this.context;
    return context !== undefined && mayReceive(context.access, family);
  }

  seesErrorDetail(): boolean {
    const context = this.context;
    return context !== undefined && seesErrorDetail(context.access);
  }

  send(frame: object): void {
    this.write(JSON.stringify(frame));
  }

  /** An event frame (EventTarget): written like any frame, and counted as delivered. */
  sendText(frame: string | Buffer): void {
    this.deps.eventsDelivered.add();
    this.write(frame);
  }

  private write(frame: string | Buffer): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    if (isSlowConsumer(this.socket, this.deps.limits)) {
      // A close frame would queue behind the unread bytes, so drop the socket and its queue now.
      this.logger.warn({ bufferedBytes: this.socket.bufferedAmount }, "slow consumer disconnected");
      this.socket.terminate();
      return;
    }
    this.cork();
    this.socket.send(frame, { binary: false });
  }

  /** This turn's frames leave in one write (socket-corks.ts). */
  private cork(): void {
    const tcp = (this.socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (tcp !== undefined) corkForTurn(tcp);
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  /** The `shutdown` event: this edge drains; answers to requests already sent still come here. */
  notifyShutdown(notice: ShutdownNotice): void {
    this.send({ event: "shutdown", payload: notice });
  }

  /**
   * One frame from the client, handled in a trace of its own: its id is the request id on every
   * log line written for it, here and in the services it calls over the bus.
   */
  receive(raw: Buffer): Promise<void> {
    return runInTrace(startSpan(), () => this.handle(raw));
  }

  private async handle(raw: Buffer): Promise<void> {
    const parsed = parseRequestFrame(raw);
    if (!parsed.ok) {
      this.send(errorFrame(parsed.id, parsed.error, this.logger));
      return;
    }
    const { id, method, params } = parsed.frame;
    if (this.inFlight >= this.deps.limits.maxInFlight) {
      this.send(errorFrame(id, tooManyInFlight(this.deps.limits), this.logger));
      return;
    }
    this.inFlight++;
    const done = this.deps.drain.track();
    // Only known names become label values, so junk methods cannot blow up metric cardinality.
    const label = method === "connect" || this.deps.registry.has(method) ? method : "unknown";
    const metered = this.deps.metrics.meter.begin("ws", label);
    const span = beginSpan("edge", label, "server")?.set("rpc.system", "websocket").set("rpc.method", label);
    let outcome = "ok";
    try {
      this.deps.drain.assertAccepting();
      const payload = method === "connect" ? await this.connect(params) : await this.call(method, params);
      if (isEncodedJson(payload)) this.write(encodedSuccessFrame(id, payload));
      else if (payload instanceof PayloadWithMeta) this.send({ ...successFrame(id, payload.payload), meta: payload.meta });
      else this.send(successFrame(id, payload));
    } catch (err) {
      const frame = errorFrame(id as FrameId, err, this.logger, this.seesErrorDetail());
      outcome = frame.error.code;
      this.send(frame);
    } finally {
      this.inFlight--;
      done();
      this.deps.metrics.meter.end(metered, outcome);
      span?.set("gw.outcome", outcome).end(outcome);
      // Per-request WS lines are debug: a socket carries thousands of requests a second, and a
      // line each at info halved the edge's RPC throughput (bench/README.md); HTTP stays at info.
      if (this.deps.accessLog && method !== "connect" && this.deps.logger.isLevelEnabled("debug")) {
        const ms = Math.round((performance.now() - metered.startedAt) * 10) / 10;
        this.logger.debug({ method: label, id, outcome, ms }, "ws request");
      }
    }
  }

  /** Not `async`: handle() awaits it inside its try, which catches a synchronous throw too. */
  private call(method: string, params: unknown): Promise<MethodResult> {
    const context = this.context;
    if (context === undefined) throw new GatewayError("NOT_CONNECTED", `send connect before ${method}`);
    return this.deps.registry.dispatch(method, params, context);
  }

  private async connect(rawParams: unknown): Promise<Record<string, unknown>> {
    const handshake = this.state;
    if (!(handshake instanceof ConnectHandshake)) throw new GatewayError("INVALID_REQUEST", "already connected");
    const { context, params } = await handshake.admit(this, rawParams);
    // The handshake goes, and with it the upgrade's headers (a trusted proxy's user header):
    // an authenticated connection keeps only what its method calls need.
    this.state = context;
    // The socket closed while the credential was checked: closed() has run, so registering the
    // connection now would leave it in the event hub for good.
    if (this.isClosed) throw new GatewayError("UNAVAILABLE", "the socket closed during connect");
    // A pairing connection keeps a deadline: it must ask to be paired within the pre-connect time.
    if (context.access === "pairing") {
      this.setDeadline(this.deps.preConnectTimeoutMs, () => this.close(4008, "no pairing request"));
    } else {
      clearTimeout(this.deadline);
      this.deadline = undefined;
    }
    this.deps.events.add(this);
    return welcome(this, params, context);
  }
}
