import { GatewayError } from "@gw/contracts";
import { type AuthAttempt, type AuthMethod, type AuthSettings, authenticate } from "./authenticate.js";
import type { FailedAuthLimiter } from "./failed-auth-limiter.js";

export interface Principal {
  method: AuthMethod;
  user?: string;
  clientIp: string;
}

/** Limiter first (a blocked IP is refused before its secret is even checked), then the chain. */
export class AuthGate {
  constructor(
    private readonly settings: AuthSettings,
    private readonly limiter: FailedAuthLimiter,
  ) {}

  assertNotBlocked(clientIp: string): void {
    this.limiter.assertAllowed(clientIp);
  }

  async authorize(attempt: AuthAttempt, clientIp: string): Promise<Principal> {
    this.limiter.assertAllowed(clientIp);
    const result = authenticate(this.settings, attempt);
    if (!result.ok) {
      await this.limiter.recordFailure(clientIp);
      throw new GatewayError("UNAUTHORIZED", `authentication failed: ${result.reason}`);
    }
    return result.user === undefined
      ? { method: result.method, clientIp }
      : { method: result.method, user: result.user, clientIp };
  }
}
