import type { Bus, Subjects } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import type { FastStore } from "@gw/store";
import type { DeviceRegistry } from "../devices/device-registry.js";
import { AuthGate } from "./auth-gate.js";
import { TrustedProxies } from "./client-address.js";
import { FailedAuthLimiter, type FailedAuthWatcher } from "./failed-auth-limiter.js";
import { IdentityRoles } from "./identity-roles.js";
import { OriginPolicy } from "./origin-policy.js";

/** Everything of the edge that decides who a client is and what it may do. */
export interface EdgeAuth {
  trustedProxies: TrustedProxies;
  origins: OriginPolicy;
  /** Failed authentications per client IP, shared by every edge through the FastStore. */
  limiter: FailedAuthLimiter;
  /** The SPEC §5 chain, for WebSocket `connect` and HTTP bearer credentials alike. */
  authGate: AuthGate;
  identityRoles: IdentityRoles;
}

/** The edge's auth, from `gateway` in the config (SPEC §5). */
export function edgeAuth(deps: {
  gateway: GatewayConfig["gateway"];
  fastStore: FastStore;
  bus: Bus;
  subjects: Subjects;
  devices: DeviceRegistry;
  watcher: FailedAuthWatcher;
}): EdgeAuth {
  const { gateway } = deps;
  const trustedProxies = new TrustedProxies(gateway.trustedProxies);
  const limiter = new FailedAuthLimiter(
    deps.fastStore.counters,
    { max: gateway.limits.failedAuthMax, windowMs: gateway.limits.failedAuthWindowSeconds * 1000 },
    { bus: deps.bus, subjects: deps.subjects },
    deps.watcher,
  );
  const authGate = new AuthGate(
    {
      token: gateway.auth.token,
      password: gateway.auth.password,
      allowLoopback: gateway.auth.allowLoopback,
      overlayMode: gateway.overlay.mode,
      trustedProxy: gateway.auth.trustedProxy,
      trustedProxies,
      pairingEnabled: gateway.pairing.enabled,
    },
    limiter,
    deps.devices,
  );
  return {
    trustedProxies,
    origins: new OriginPolicy(gateway.allowedOrigins),
    limiter,
    authGate,
    identityRoles: new IdentityRoles({ overlay: gateway.overlay, trustedProxy: gateway.auth.trustedProxy }),
  };
}
