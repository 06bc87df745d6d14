import { hash, timingSafeEqual } from "node:crypto";
import type { Role } from "@gw/contracts";
import type { DeviceIdentity } from "../devices/device-registry.js";
import { looksLikeDeviceToken } from "../devices/device-token.js";
import {
  type HeaderBag,
  hasForwardingHeaders,
  isBrowserRequest,
  isLoopbackIp,
  type TrustedProxies,
} from "./client-address.js";

export type AuthMethod = "loopback" | "device" | "token" | "password" | "overlay" | "trusted-proxy";

export interface AuthSettings {
  token?: string | undefined;
  password?: string | undefined;
  allowLoopback: boolean;
  overlayMode: "enabled" | "require" | "disabled";
  trustedProxy: { enabled: boolean; header: string };
  trustedProxies: TrustedProxies;
}

/** What one request or `connect` presents; the HTTP or WS layer extracts it. */
export interface AuthAttempt {
  /** Socket peer address, normalised. */
  peerIp: string;
  /** The host the request was sent to (absolute-form target, else Host), already parsed. */
  host: string | undefined;
  headers: HeaderBag;
  /** The secret presented (bearer header, or `auth.token`/`auth.password` in `connect`). */
  credential: string | undefined;
  /** The role a WebSocket `connect` asks for; HTTP requests have none. */
  role?: Role;
}

/** Checks device tokens against the paired devices (the durable store). */
export interface DeviceTokenVerifier {
  verify(token: string): Promise<DeviceIdentity | null>;
}

export type AuthResult =
  | { ok: true; method: AuthMethod; user?: string; device?: DeviceIdentity }
  | { ok: false; reason: string };

export const OVERLAY_HEADER = "overlay-user-login";
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "::1"]);

function digest(value: string): Buffer {
  return hash("sha256", value, "buffer");
}

/** The digests of the configured secrets compared against (a handful), made once each. */
const expectedDigests = new Map<string, Buffer>();
const MAX_EXPECTED_DIGESTS = 64;

/** Constant-time comparison that does not leak the secret's length either. */
export function secretEquals(presented: string, expected: string): boolean {
  let want = expectedDigests.get(expected);
  if (want === undefined) {
    want = digest(expected);
    if (expectedDigests.size < MAX_EXPECTED_DIGESTS) expectedDigests.set(expected, want);
  }
  return timingSafeEqual(digest(presented), want);
}

function singleHeader(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() || undefined;
}

/**
 * SPEC §5 loopback: peer is loopback, the request was sent to a loopback name, and nothing was
 * forwarded. Stricter than SPEC in two ways (docs/decisions.md): a browser request (it carries
 * `Origin` or `Sec-Fetch-*`) is never local, since any web page can make one to 127.0.0.1; and a
 * peer listed in `gateway.trustedProxies` is a proxy, whose requests are other clients'.
 */
export function isLocalDirect(attempt: AuthAttempt, trustedProxies?: TrustedProxies): boolean {
  return (
    isLoopbackIp(attempt.peerIp) &&
    attempt.host !== undefined &&
    LOCAL_HOSTS.has(attempt.host) &&
    !hasForwardingHeaders(attempt.headers) &&
    !isBrowserRequest(attempt.headers) &&
    trustedProxies?.has(attempt.peerIp) !== true
  );
}

/**
 * The identity a proxy vouches for: only believed from a peer in `gateway.trustedProxies`
 * (loopback included only when listed), since anyone else can send any header.
 */
function proxiedUser(settings: AuthSettings, attempt: AuthAttempt, header: string): string | undefined {
  if (!settings.trustedProxies.has(attempt.peerIp)) return undefined;
  return singleHeader(attempt.headers, header);
}

/** `gateway.overlay.mode: require`: the overlay identity is the only way in. */
function overlayOnly(settings: AuthSettings, attempt: AuthAttempt): AuthResult {
  const user = proxiedUser(settings, attempt, OVERLAY_HEADER);
  if (user !== undefined) return { ok: true, method: "overlay", user };
  return { ok: false, reason: "an overlay-network identity is required" };
}

/**
 * The SPEC §5 chain, in its order: loopback, device token, bearer token, password, overlay
 * identity, trusted proxy. The first that succeeds wins. Loopback applies only when no
 * credential is presented: a wrong secret from a local client is still a failure, so a
 * misconfigured local tool is told and counted. A device token authenticates role `node` only
 * (SPEC §5: "sent as auth.token in connect with role node"); the store is read only for
 * credentials shaped like one.
 */
export async function authenticate(
  settings: AuthSettings,
  attempt: AuthAttempt,
  devices?: DeviceTokenVerifier,
): Promise<AuthResult> {
  if (settings.overlayMode === "require") return overlayOnly(settings, attempt);
  const { credential } = attempt;

  if (credential === undefined && settings.allowLoopback && isLocalDirect(attempt, settings.trustedProxies)) {
    return { ok: true, method: "loopback" };
  }
  const deviceShaped = credential !== undefined && looksLikeDeviceToken(credential);
  if (deviceShaped && attempt.role === "node" && devices !== undefined) {
    const device = await devices.verify(credential);
    if (device !== null) return { ok: true, method: "device", device };
  }
  if (credential !== undefined && settings.token && secretEquals(credential, settings.token)) {
    return { ok: true, method: "token" };
  }
  if (credential !== undefined && settings.password && secretEquals(credential, settings.password)) {
    return { ok: true, method: "password" };
  }
  if (settings.overlayMode === "enabled") {
    const user = proxiedUser(settings, attempt, OVERLAY_HEADER);
    if (user !== undefined) return { ok: true, method: "overlay", user };
  }
  if (settings.trustedProxy.enabled) {
    const user = proxiedUser(settings, attempt, settings.trustedProxy.header.toLowerCase());
    if (user !== undefined) return { ok: true, method: "trusted-proxy", user };
  }
  if (credential === undefined) return { ok: false, reason: "missing credentials" };
  if (deviceShaped && attempt.role !== "node") return { ok: false, reason: "a device token authenticates role node only" };
  return { ok: false, reason: "wrong credentials" };
}
