import { GatewayError } from "@gw/contracts";
import type { DeviceIdentity } from "../devices/device-registry.js";
import {
  type AuthAttempt,
  type AuthMethod,
  type AuthResult,
  type AuthSettings,
  authenticate,
  type DeviceTokenVerifier,
} from "./authenticate.js";
import type { FailedAuthLimiter } from "./failed-auth-limiter.js";

export interface Principal {
  /** `pairing`: a device with no credential yet, let in only to ask to be paired. */
  method: AuthMethod | "pairing";
  user?: string;
  /** Set when a device token authenticated the connection. */
  device?: DeviceIdentity;
  clientIp: string;
}

/** Limiter first (a blocked IP is refused before its secret is even checked), then the chain. */
export class AuthGate {
  constructor(
    private readonly settings: AuthSettings & { pairingEnabled: boolean },
    private readonly limiter: FailedAuthLimiter,
    private readonly devices?: DeviceTokenVerifier,
  ) {}

  assertNotBlocked(clientIp: string): void {
    this.limiter.assertAllowed(clientIp);
  }

  /**
   * Every failure counts toward the client IP's limit, a guessed device token as much as a
   * guessed bearer token. A store that cannot be read is UNAVAILABLE, not a failure. A presented
   * secret is checked only within the IP's budget (FailedAuthLimiter.check), so requests
   * arriving together cannot all be checked before the first failure is counted. An attempt
   * with no secret (loopback, a proxy's identity header) guesses nothing and holds no slot; its
   * failure still counts.
   */
  async authorize(attempt: AuthAttempt, clientIp: string): Promise<Principal> {
    const run = () => authenticate(this.settings, attempt, this.devices);
    let result: AuthResult;
    if (attempt.credential === undefined) {
      this.limiter.assertAllowed(clientIp);
      result = await run();
      if (!result.ok) await this.limiter.recordFailure(clientIp);
    } else {
      result = await this.limiter.check(clientIp, run, (r) => !r.ok);
    }
    if (!result.ok) throw new GatewayError("UNAUTHORIZED", `authentication failed: ${result.reason}`);
    const principal: Principal = { method: result.method, clientIp };
    if (result.user !== undefined) principal.user = result.user;
    if (result.device !== undefined) principal.device = result.device;
    return principal;
  }

  /**
   * A pairing connection presents no credential, so it is no failed attempt; it is refused
   * while the IP is blocked, when pairing is off, and when the overlay identity is required
   * (`require` admits nothing else).
   */
  admitPairing(clientIp: string): Principal {
    this.limiter.assertAllowed(clientIp);
    if (this.settings.overlayMode === "require") {
      throw new GatewayError("UNAUTHORIZED", "authentication failed: an overlay-network identity is required");
    }
    if (!this.settings.pairingEnabled) {
      throw new GatewayError("FORBIDDEN", "device pairing is disabled on this gateway (gateway.pairing.enabled)");
    }
    return { method: "pairing", clientIp };
  }
}
