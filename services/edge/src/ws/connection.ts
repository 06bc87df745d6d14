import { randomUUID } from "node:crypto";
import { ConnectParamsSchema, describeIssues, type FrameId, GatewayError, isEncodedJson, type Role } from "@gw/contracts";
import { runInTrace, startSpan } from "@gw/bus";
import type { Logger, Metrics, Tally } from "@gw/runtime";
import { type RawData, WebSocket } from "ws";
import type { AuthGate, Principal } from "../auth/auth-gate.js";
import type { HeaderBag } from "../auth/client-address.js";
import type { EventHub, EventTarget } from "../events/event-hub.js";
import { type CallContext, type MethodRegistry, type MethodResult, PayloadWithMeta } from "../methods/registry.js";
import type { Drain, ShutdownNotice } from "../drain.js";
import { encodedSuccessFrame } from "./encoded-frames.js";
import { errorFrame, parseRequestFrame, successFrame } from "./frames.js";
import { isSlowConsumer, tooManyInFlight, type WsLimits } from "./limits.js";

export interface ConnectionDeps {
  registry: MethodRegistry;
  authGate: AuthGate;
  logger: Logger;
  metrics: Metrics;
  events: EventHub;
  preConnectTimeoutMs: number;
  limits: WsLimits;
  /** Extra fields for the `connect` response (server identity, limits). */
  hello: Record<string, unknown>;
  /** Called once when the socket has closed. */
  onClose(conn: Connection): void;
  /** Counts event frames written to sockets. */
  eventsDelivered: Tally;
  /** One info line per request (ops.accessLog). */
  accessLog: boolean;
  /** Counts requests in flight, and refuses new ones once the edge drains. */
  drain: Drain;
}

export interface UpgradeInfo {
  peerIp: string;
  clientIp: string;
  /** The host the upgrade was sent to (absolute-form target, else Host), parsed. */
  host: string | undefined;
  headers: HeaderBag;
}

/**
 * Before `connect` succeeds, where the handshake is; after, what every method call of this
 * connection gets, made once at connect.
 */
type State = "new" | "connecting" | ConnectionContext;

/** A connection's identity for method calls; its methods live on the prototype, not per socket. */
class ConnectionContext implements CallContext {
  constructor(
    readonly connId: string,
    readonly role: Role,
    readonly principal: Principal,
    private readonly events: EventHub,
  ) {}

  watchSession(key: string): void {
    this.events.watchSession(this.connId, key);
  }

  unwatchSession(key: string): void {
    this.events.unwatchSession(this.connId, key);
  }
}

/**
 * The edge's WebSocket class (ws's `WebSocket` server option): it carries its Connection, so
 * one set of shared listener functions serves every socket instead of three closures each.
 */
export class EdgeSocket extends WebSocket {
  connection?: Connection;
}

function onSocketMessage(this: EdgeSocket, data: RawData): void {
  void this.connection?.receive(toBuffer(data));
}

function onSocketClose(this: EdgeSocket): void {
  this.connection?.closed();
}

function onSocketError(this: EdgeSocket, err: Error): void {
  this.connection?.socketError(err);
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** One WebSocket client: `connect` first, then registry-dispatched requests, plus events. */
export class Connection implements EventTarget {
  readonly id = randomUUID();
  private state: State = "new";
  readonly clientIp: string;
  /** What `connect` needs of the upgrade request; dropped once it succeeds. */
  private upgrade: UpgradeInfo | undefined;
  private preConnectTimer: NodeJS.Timeout | undefined;
  private childLogger: Logger | undefined;
  private corked = false;
  private inFlight = 0;

  constructor(
    private readonly socket: EdgeSocket,
    upgrade: UpgradeInfo,
    private readonly deps: ConnectionDeps,
  ) {
    this.clientIp = upgrade.clientIp;
    this.upgrade = upgrade;
    this.preConnectTimer = setTimeout(() => {
      if (typeof this.state === "string") socket.close(4008, "connect timeout");
    }, deps.preConnectTimeoutMs);
    this.preConnectTimer.unref();
    socket.connection = this;
    socket.on("message", onSocketMessage);
    socket.on("close", onSocketClose);
    socket.on("error", onSocketError);
  }

  /** The socket has closed: forget the connection everywhere (called once, by the socket). */
  closed(): void {
    clearTimeout(this.preConnectTimer);
    this.deps.events.remove(this.id);
    this.deps.onClose(this);
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

  get role(): Role | undefined {
    return typeof this.state === "string" ? undefined : this.state.role;
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

  /**
   * Frames produced in one turn of the event loop (answers finishing together, a burst of run
   * events) leave in one write instead of one system call each: the socket is corked at the
   * first frame and uncorked once the turn's other callbacks have run.
   */
  private cork(): void {
    if (this.corked) return;
    const tcp = (this.socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (tcp === undefined) return;
    this.corked = true;
    tcp.cork();
    setImmediate(() => {
      this.corked = false;
      tcp.uncork();
    });
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
    let outcome = "ok";
    try {
      this.deps.drain.assertAccepting();
      const payload = method === "connect" ? await this.connect(params) : await this.call(method, params);
      if (isEncodedJson(payload)) this.write(encodedSuccessFrame(id, payload));
      else if (payload instanceof PayloadWithMeta) this.send({ ...successFrame(id, payload.payload), meta: payload.meta });
      else this.send(successFrame(id, payload));
    } catch (err) {
      const frame = errorFrame(id as FrameId, err, this.logger);
      outcome = frame.error.code;
      this.send(frame);
    } finally {
      this.inFlight--;
      done();
      this.deps.metrics.meter.end(metered, outcome);
      if (this.deps.accessLog && method !== "connect") {
        const ms = Math.round((performance.now() - metered.startedAt) * 10) / 10;
        this.logger.info({ method: label, id, outcome, ms }, "ws request");
      }
    }
  }

  private async call(method: string, params: unknown): Promise<MethodResult> {
    const state = this.state;
    if (typeof state === "string") throw new GatewayError("NOT_CONNECTED", `send connect before ${method}`);
    return this.deps.registry.dispatch(method, params, state);
  }

  private async connect(rawParams: unknown): Promise<Record<string, unknown>> {
    const upgrade = this.upgrade;
    if (this.state !== "new" || upgrade === undefined) {
      throw new GatewayError(
        "INVALID_REQUEST",
        this.state === "connecting" ? "connect already in progress" : "already connected",
      );
    }
    const parsed = ConnectParamsSchema.safeParse(rawParams ?? {});
    if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "params"));
    const params = parsed.data;
    this.state = "connecting";
    let context: ConnectionContext;
    try {
      const principal = await this.deps.authGate.authorize(
        {
          peerIp: upgrade.peerIp,
          host: upgrade.host,
          headers: upgrade.headers,
          credential: params.auth?.token ?? params.auth?.password,
        },
        this.clientIp,
      );
      context = new ConnectionContext(this.id, params.role, principal, this.deps.events);
      this.state = context;
    } catch (err) {
      this.state = "new";
      throw err;
    }
    clearTimeout(this.preConnectTimer);
    // Only `connect` reads the upgrade's headers (a trusted proxy's user header): an
    // authenticated connection lets them go, like its pre-connect timer.
    this.preConnectTimer = undefined;
    this.upgrade = undefined;
    this.deps.events.add(this);
    this.deps.logger.info(
      {
        connId: this.id,
        clientIp: this.clientIp,
        role: params.role,
        auth: context.principal.method,
        client: params.client,
      },
      "connected",
    );
    return {
      connId: this.id,
      role: params.role,
      auth: { method: context.principal.method },
      methods: ["connect", ...this.deps.registry.names()],
      ...this.deps.hello,
    };
  }
}
