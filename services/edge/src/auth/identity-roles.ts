import { GatewayError, type Role } from "@gw/contracts";
import type { Principal } from "./auth-gate.js";

/** The config of one identity method: `gateway.auth.trustedProxy` or `gateway.overlay`. */
export interface IdentityRoleRule {
  roles: readonly Role[];
  controlUsers: readonly string[];
}

export interface IdentityRoleSettings {
  overlay: IdentityRoleRule;
  trustedProxy: IdentityRoleRule;
}

type IdentityMethod = "overlay" | "trusted-proxy";

interface Rule {
  roles: ReadonlySet<Role>;
  controlUsers: ReadonlySet<string>;
  /** The config section, for messages that tell an operator what to change. */
  key: string;
}

/**
 * Which roles a user vouched for by a proxy or overlay network may take (docs/decisions.md,
 * Authentication). Such a user is a person, not the operator: without this, any of them could
 * ask for `control` and step out of the `webchat:<owner>` confinement. Refusals are FORBIDDEN,
 * never UNAUTHORIZED: the identity was good, so nothing counts against the failed-auth limit.
 * The token, the password, loopback, device tokens and pairing are not limited here.
 */
export class IdentityRoles {
  private readonly rules: Readonly<Record<IdentityMethod, Rule>>;

  constructor(settings: IdentityRoleSettings) {
    const rule = (config: IdentityRoleRule, key: string): Rule => ({
      roles: new Set(config.roles),
      controlUsers: new Set(config.controlUsers),
      key,
    });
    this.rules = {
      overlay: rule(settings.overlay, "gateway.overlay"),
      "trusted-proxy": rule(settings.trustedProxy, "gateway.auth.trustedProxy"),
    };
  }

  /** At `connect`, once the principal is known. */
  assertMayConnect(principal: Principal, role: Role): void {
    const key = this.refusing(principal, role);
    if (key === undefined) return;
    const more = role === "control" ? ` or ${key}.controlUsers` : "";
    throw new GatewayError(
      "FORBIDDEN",
      `role ${role} is not allowed for a user authenticated by ${principal.method} (${key}.roles${more})`,
    );
  }

  /** The HTTP operator routes (/v1, /api/send, /api/tools/invoke): they act as control. */
  assertOperator(principal: Principal): void {
    const key = this.refusing(principal, "control");
    if (key === undefined) return;
    throw new GatewayError(
      "FORBIDDEN",
      `this endpoint needs role control, which is not allowed for a user authenticated by ${principal.method} (${key}.roles or ${key}.controlUsers)`,
    );
  }

  /** The config section whose rule refuses `role` to `principal`, or undefined when allowed. */
  private refusing(principal: Principal, role: Role): string | undefined {
    if (principal.method !== "overlay" && principal.method !== "trusted-proxy") return undefined;
    const rule = this.rules[principal.method];
    if (rule.roles.has(role)) return undefined;
    if (role === "control" && principal.user !== undefined && rule.controlUsers.has(principal.user)) return undefined;
    return rule.key;
  }
}
