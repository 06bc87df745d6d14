import { type ConnectParams, ConnectParamsSchema, describeIssues, GatewayError } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { AuthGate } from "../auth/auth-gate.js";
import type { HeaderBag } from "../auth/client-address.js";
import type { IdentityRoles } from "../auth/identity-roles.js";
import { methodsFor } from "../auth/permissions.js";
import type { DeviceLinks, DeviceSocket } from "../devices/device-links.js";
import type { DeviceRegistry } from "../devices/device-registry.js";
import type { MethodRegistry } from "../methods/registry.js";
import { ConnectionContext, type ContextOwner } from "./connection-context.js";

/** What `connect` needs of the upgrade request; a connection holds it only until `connect` succeeds. */
export interface UpgradeInfo {
  peerIp: string;
  clientIp: string;
  /** The host the upgrade was sent to (absolute-form target, else Host), parsed. */
  host: string | undefined;
  headers: HeaderBag;
}

export interface HandshakeDeps {
  registry: MethodRegistry;
  authGate: AuthGate;
  /** The roles a proxy's or overlay network's user may take. */
  identityRoles: IdentityRoles;
  logger: Logger;
  /** Device sockets are registered here, so a rotated or revoked token closes them. */
  devices: { links: DeviceLinks; registry: Pick<DeviceRegistry, "verify"> };
  /** Extra fields for the `connect` response (server identity, limits). */
  hello: Record<string, unknown>;
}

/** The connection a handshake admits. */
export interface Admissible extends ContextOwner, DeviceSocket {
  readonly clientIp: string;
  /** Whether the socket has closed (it may, while a credential is being checked). */
  readonly isClosed: boolean;
  readonly deps: ContextOwner["deps"] & HandshakeDeps;
}

/**
 * A socket's `connect` handshake (SPEC §5): the params checked, the credential run through the
 * auth chain (or a pairing admission), a device registered so its token stays honest. It holds
 * the upgrade request's headers, which only `connect` reads: the connection drops the handshake,
 * and with it the headers, once `connect` succeeds.
 */
export class ConnectHandshake {
  private connecting = false;

  constructor(private readonly upgrade: UpgradeInfo) {}

  /** The context of the admitted connection; throws (and may be tried again) if `connect` is refused. */
  async admit(conn: Admissible, rawParams: unknown): Promise<{ context: ConnectionContext; params: ConnectParams }> {
    if (this.connecting) throw new GatewayError("INVALID_REQUEST", "connect already in progress");
    const parsed = ConnectParamsSchema.safeParse(rawParams ?? {});
    if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "params"));
    const params = parsed.data;
    this.connecting = true;
    try {
      return { context: await authenticate(conn, params, this.upgrade), params };
    } finally {
      this.connecting = false;
    }
  }
}

/** The chain (or a pairing admission), then, for a device, the registration that keeps its token honest. */
async function authenticate(conn: Admissible, params: ConnectParams, upgrade: UpgradeInfo): Promise<ConnectionContext> {
  const { authGate, identityRoles, devices } = conn.deps;
  if (params.pairing === true) {
    return new ConnectionContext(conn, params.role, "pairing", authGate.admitPairing(conn.clientIp));
  }
  const credential = params.auth?.token ?? params.auth?.password;
  const principal = await authGate.authorize(
    { peerIp: upgrade.peerIp, host: upgrade.host, headers: upgrade.headers, credential, role: params.role },
    conn.clientIp,
  );
  // After the chain: a refused role is no failed credential, so the limiter never sees it.
  identityRoles.assertMayConnect(principal, params.role);
  const device = principal.device;
  if (device !== undefined && credential !== undefined) {
    // Registered first, so any later rotation reaches this socket; a change this edge heard
    // while the token was read is settled by reading the record again.
    if (!devices.links.attach(conn, device.deviceId, device.tokenId) && (await devices.registry.verify(credential)) === null) {
      devices.links.detach(conn.id, device.deviceId);
      throw new GatewayError("UNAUTHORIZED", "authentication failed: the device token was rotated or revoked");
    }
    // Closed while the store was read: closed() found no device to detach, so do it here.
    if (conn.isClosed) devices.links.detach(conn.id, device.deviceId);
  }
  return new ConnectionContext(conn, params.role, params.role, principal);
}

/** The `connected` log line and the `connect` answer: who the client is and what it may call. */
export function welcome(conn: Admissible, params: ConnectParams, context: ConnectionContext): Record<string, unknown> {
  const { principal } = context;
  const device = principal.device ? { deviceId: principal.device.deviceId } : {};
  conn.deps.logger.info(
    { connId: conn.id, clientIp: conn.clientIp, role: params.role, auth: principal.method, ...device, client: params.client },
    "connected",
  );
  return {
    connId: conn.id,
    role: params.role,
    auth: { method: principal.method, ...device },
    ...(context.home === undefined ? {} : { session: { key: context.home } }),
    methods: ["connect", ...methodsFor(context.access, conn.deps.registry.names())],
    ...conn.deps.hello,
  };
}
