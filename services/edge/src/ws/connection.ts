import { randomUUID } from "node:crypto";
import { beginSpan, runInTrace, startSpan } from "@gw/bus";
import {
  type ConnectParams,
  ConnectParamsSchema,
  describeIssues,
  type FrameId,
  GatewayError,
  isEncodedJson,
  type Role,
} from "@gw/contracts";
import type { Logger, Metrics, Tally } from "@gw/runtime";
import type { AuthGate, Principal } from "../auth/auth-gate.js";
import type { HeaderBag } from "../auth/client-address.js";
import type { IdentityRoles } from "../auth/identity-roles.js";
import { type Access, type EventFamily, eventFamily, mayReceive, methodsFor, seesErrorDetail } from "../auth/permissions.js";
import { assertInHome, sessionHome } from "../auth/session-scope.js";
import type { DeviceLinks } from "../devices/device-links.js";
import type { DeviceRegistry } from "../devices/device-registry.js";
import type { EventHub, EventTarget } from "../events/event-hub.js";
import type { CallContext } from "../call-context.js";
import { type MethodRegistry, type MethodResult, PayloadWithMeta } from "../methods/registry.js";
import type { Drain, ShutdownNotice } from "../drain.js";
import { type EdgeSocket, onSocketClose, onSocketError, onSocketMessage } from "./edge-socket.js";
import { encodedSuccessFrame } from "./encoded-frames.js";
import { errorFrame, parseRequestFrame, successFrame } from "./frames.js";
import { isSlowConsumer, tooManyInFlight, type WsLimits } from "./limits.js";

export interface ConnectionDeps {
  registry: MethodRegistry;
  authGate: AuthGate;
  /** The roles a proxy's or overlay network's user may take. */
  identityRoles: IdentityRoles;
  logger: Logger;
  metrics: Metrics;
  events: EventHub;
  /** Device sockets are registered here, so a rotated or revoked token closes them. */
  devices: { links: DeviceLinks; registry: Pick<DeviceRegistry, "verify"> };
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
  /** The session-key root a webchat connection is confined to (auth/session-scope.ts). */
  readonly home: string | undefined;

  constructor(
    private readonly conn: Connection,
    readonly role: Role,
    readonly access: Access,
    readonly principal: Principal,
  ) {
    this.home = sessionHome(access, principal.user);
  }

  get connId(): string {
    return this.conn.id;
  }

  assertSession(key: string): void {
    assertInHome(this.home, key);
  }

  watchSession(key: string): void {
    this.conn.deps.events.watchSession(this.conn.id, key);
  }

  unwatchSession(key: string): void {
    this.conn.deps.events.unwatchSession(this.conn.id, key);
  }

  sendEvent(event: string, payload: object): void {
    if (mayReceive(this.access, eventFamily(event))) this.conn.send({ event, payload });
  }

  onClose(cleanup: () => void): void {
    this.conn.onClose(cleanup);
  }

  setDeadline(ms: number, onEnd: () => void): void {
    this.conn.setDeadline(ms, onEnd);
  }

  close(code: number, reason: string): void {
    this.conn.close(code, reason);
  }
}

/** One WebSocket client: `connect` first, then registry-dispatched requests, plus events. */
export { EdgeSocket } from "./edge-socket.js";

export class Connection implements EventTarget {
  readonly id = randomUUID();
  private state: State = "new";
  readonly clientIp: string;
  /** What `connect` needs of the upgrade request; dropped once it succeeds. */
  private upgrade: UpgradeInfo | undefined;
  /** Before `connect`: the pre-connect timeout; after, a deadline a method set (a pairing request's). */
  private deadline: NodeJS.Timeout | undefined;
  private childLogger: Logger | undefined;
  private corked = false;
  private inFlight = 0;
  /** What methods asked to run when the socket closes (rare: made on first use). */
  private cleanups: Array<() => void> | undefined;
  private isClosed = false;

  constructor(
    private readonly socket: EdgeSocket,
    upgrade: UpgradeInfo,
    readonly deps: ConnectionDeps,
  ) {
    this.clientIp = upgrade.clientIp;
    this.upgrade = upgrade;
    this.deadline = setTimeout(() => {
      if (typeof this.state === "string") socket.close(4008, "connect timeout");
    }, deps.preConnectTimeoutMs);
    this.deadline.unref();
    socket.connection = this;
    socket.on("message", onSocketMessage);
    socket.on("close", onSocketClose);
    socket.on("error", onSocketError);
  }

  /** The socket has closed: forget the connection everywhere (called once, by the socket). */
  closed(): void {
    this.isClosed = true;
    clearTimeout(this.deadline);
    this.deps.events.remove(this.id);
    const state = this.state;
    if (typeof state !== "string" && state.principal.device !== undefined) {
      this.deps.devices.links.detach(this.id, state.principal.device.deviceId);
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

  get role(): Role | undefined {
    return typeof this.state === "string" ? undefined : this.state.role;
  }

  /** Whether this connection may receive events of `family` (auth/permissions.ts). */
  accepts(family: EventFamily): boolean {
    return typeof this.state !== "string" && mayReceive(this.state.access, family);
  }

  seesErrorDetail(): boolean {
    return typeof this.state !== "string" && seesErrorDetail(this.state.access);
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
      context = await this.authenticate(params, upgrade);
      this.state = context;
    } catch (err) {
      this.state = "new";
      throw err;
    }
    // The socket closed while the credential was checked: closed() has run, so registering the
    // connection now would leave it in the event hub for good.
    if (this.isClosed) throw new GatewayError("UNAVAILABLE", "the socket closed during connect");
    // Only `connect` reads the upgrade's headers (a trusted proxy's user header): an
    // authenticated connection lets them go. A pairing connection keeps a deadline: it must
    // ask to be paired within the pre-connect time.
    this.upgrade = undefined;
    if (context.access === "pairing") {
      this.setDeadline(this.deps.preConnectTimeoutMs, () => this.close(4008, "no pairing request"));
    } else {
      clearTimeout(this.deadline);
      this.deadline = undefined;
    }
    this.deps.events.add(this);
    const { principal } = context;
    this.deps.logger.info(
      {
        connId: this.id,
        clientIp: this.clientIp,
        role: params.role,
        auth: principal.method,
        ...(principal.device ? { deviceId: principal.device.deviceId } : {}),
        client: params.client,
      },
      "connected",
    );
    return {
      connId: this.id,
      role: params.role,
      auth: { method: principal.method, ...(principal.device ? { deviceId: principal.device.deviceId } : {}) },
      ...(context.home === undefined ? {} : { session: { key: context.home } }),
      methods: ["connect", ...methodsFor(context.access, this.deps.registry.names())],
      ...this.deps.hello,
    };
  }

  /** The chain (or a pairing admission), then, for a device, the registration that keeps its token honest. */
  private async authenticate(params: ConnectParams, upgrade: UpgradeInfo): Promise<ConnectionContext> {
    if (params.pairing === true) {
      return new ConnectionContext(this, params.role, "pairing", this.deps.authGate.admitPairing(this.clientIp));
    }
    const credential = params.auth?.token ?? params.auth?.password;
    const principal = await this.deps.authGate.authorize(
      { peerIp: upgrade.peerIp, host: upgrade.host, headers: upgrade.headers, credential, role: params.role },
      this.clientIp,
    );
    // After the chain: a refused role is no failed credential, so the limiter never sees it.
    this.deps.identityRoles.assertMayConnect(principal, params.role);
    const device = principal.device;
    if (device !== undefined && credential !== undefined) {
      const { links, registry } = this.deps.devices;
      // Registered first, so any later rotation reaches this socket; a change this edge heard
      // while the token was read is settled by reading the record again.
      if (!links.attach(this, device.deviceId, device.tokenId) && (await registry.verify(credential)) === null) {
        links.detach(this.id, device.deviceId);
        throw new GatewayError("UNAUTHORIZED", "authentication failed: the device token was rotated or revoked");
      }
      // Closed while the store was read: closed() found no device to detach, so do it here.
      if (this.isClosed) links.detach(this.id, device.deviceId);
    }
    return new ConnectionContext(this, params.role, params.role, principal);
  }
}
