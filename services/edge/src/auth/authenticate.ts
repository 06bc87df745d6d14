import { createHash, timingSafeEqual } from "node:crypto";
import {
  type HeaderBag,
  hasForwardingHeaders,
  isBrowserRequest,
  isLoopbackIp,
  type TrustedProxies,
} from "./client-address.js";

export type AuthMethod = "loopback" | "token" | "password" | "overlay" | "trusted-proxy";

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
}

export type AuthResult = { ok: true; method: AuthMethod; user?: string } | { ok: false; reason: string };

export const OVERLAY_HEADER = "overlay-user-login";
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "::1"]);

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/** Constant-time comparison that does not leak the secret's length either. */
export function secretEquals(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

function singleHeader(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() || undefined;
}

/**
 * SPEC §5 loopback: peer is loopback, the request was sent to a loopback name, and nothing was
 * forwarded. Stricter than SPEC in one way (docs/decisions.md): a browser request (it carries
 * `Origin` or `Sec-Fetch-*`) is never local, since any web page can make one to 127.0.0.1.
 */
export function isLocalDirect(attempt: AuthAttempt): boolean {
  return (
    isLoopbackIp(attempt.peerIp) &&
    attempt.host !== undefined &&
    LOCAL_HOSTS.has(attempt.host) &&
    !hasForwardingHeaders(attempt.headers) &&
    !isBrowserRequest(attempt.headers)
  );
}

/**
 * The SPEC §5 chain, in its order: loopback, (device token: pairing, not built yet),
 * bearer token, password, overlay identity, trusted proxy. The first that succeeds wins.
 * Loopback applies only when no credential is presented: a wrong secret from a local
 * client is still a failure, so a misconfigured local tool is told and counted.
 */
export function authenticate(settings: AuthSettings, attempt: AuthAttempt): AuthResult {
  const requireOverlay = settings.overlayMode === "require";
  const { credential } = attempt;

  if (!requireOverlay) {
    if (credential === undefined && settings.allowLoopback && isLocalDirect(attempt)) {
      return { ok: true, method: "loopback" };
    }
    if (credential !== undefined && settings.token && secretEquals(credential, settings.token)) {
      return { ok: true, method: "token" };
    }
    if (credential !== undefined && settings.password && secretEquals(credential, settings.password)) {
      return { ok: true, method: "password" };
    }
  }
  // Identity headers are only believed from a proxy we trust (or one on this host).
  const fromProxy = isLoopbackIp(attempt.peerIp) || settings.trustedProxies.has(attempt.peerIp);
  if (settings.overlayMode !== "disabled" && fromProxy) {
    const user = singleHeader(attempt.headers, OVERLAY_HEADER);
    if (user) return { ok: true, method: "overlay", user };
  }
  if (!requireOverlay && settings.trustedProxy.enabled && settings.trustedProxies.has(attempt.peerIp)) {
    const user = singleHeader(attempt.headers, settings.trustedProxy.header.toLowerCase());
    if (user) return { ok: true, method: "trusted-proxy", user };
  }
  if (requireOverlay) return { ok: false, reason: "an overlay-network identity is required" };
  return { ok: false, reason: credential === undefined ? "missing credentials" : "wrong credentials" };
}
