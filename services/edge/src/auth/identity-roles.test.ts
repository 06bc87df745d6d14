import { ROLES } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import type { Principal } from "./auth-gate.js";
import { IdentityRoles } from "./identity-roles.js";

const everyRole = { roles: ROLES, controlUsers: [] };
const proxied = (user: string): Principal => ({ method: "trusted-proxy", user, clientIp: "10.0.0.9" });
const overlay = (user: string): Principal => ({ method: "overlay", user, clientIp: "10.0.0.9" });

describe("identity roles", () => {
  it("lets identity users take every role by default, over WS and HTTP", () => {
    const rules = new IdentityRoles({ overlay: everyRole, trustedProxy: everyRole });
    for (const role of ROLES) expect(() => rules.assertMayConnect(proxied("alice"), role)).not.toThrow();
    expect(() => rules.assertOperator(overlay("bob"))).not.toThrow();
  });

  it("refuses a role outside the list with FORBIDDEN naming the role, the method and the config key", () => {
    const rules = new IdentityRoles({ overlay: everyRole, trustedProxy: { roles: ["webchat"], controlUsers: [] } });
    expect(() => rules.assertMayConnect(proxied("alice"), "webchat")).not.toThrow();
    expect(() => rules.assertMayConnect(proxied("alice"), "control")).toThrow(
      expect.objectContaining({
        code: "FORBIDDEN",
        message:
          "role control is not allowed for a user authenticated by trusted-proxy (gateway.auth.trustedProxy.roles or gateway.auth.trustedProxy.controlUsers)",
      }),
    );
    expect(() => rules.assertMayConnect(proxied("alice"), "node")).toThrow(
      expect.objectContaining({
        code: "FORBIDDEN",
        message: "role node is not allowed for a user authenticated by trusted-proxy (gateway.auth.trustedProxy.roles)",
      }),
    );
    // Each method has its own rule.
    expect(() => rules.assertMayConnect(overlay("alice"), "control")).not.toThrow();
  });

  it("treats the HTTP operator routes as control", () => {
    const rules = new IdentityRoles({ overlay: { roles: ["webchat", "node"], controlUsers: [] }, trustedProxy: everyRole });
    expect(() => rules.assertOperator(overlay("bob@example.org"))).toThrow(
      expect.objectContaining({ code: "FORBIDDEN", message: expect.stringContaining("gateway.overlay.roles or gateway.overlay.controlUsers") }),
    );
    expect(() => rules.assertOperator(proxied("bob@example.org"))).not.toThrow();
  });

  it("gives control to controlUsers only, matched exactly, and nothing else the roles leave out", () => {
    const rules = new IdentityRoles({
      overlay: { roles: [], controlUsers: ["ops@example.org"] },
      trustedProxy: { roles: ["webchat"], controlUsers: ["ops"] },
    });
    expect(() => rules.assertMayConnect(overlay("ops@example.org"), "control")).not.toThrow();
    expect(() => rules.assertOperator(overlay("ops@example.org"))).not.toThrow();
    expect(() => rules.assertMayConnect(overlay("ops@example.org"), "webchat")).toThrow(/role webchat/);
    expect(() => rules.assertMayConnect(overlay("OPS@example.org"), "control")).toThrow(/role control is not allowed/);
    // A controlUser of one method is nobody special to the other.
    expect(() => rules.assertOperator(proxied("ops@example.org"))).toThrow(/trusted-proxy/);
    expect(() => rules.assertOperator(proxied("ops"))).not.toThrow();
  });

  it("leaves the token, the password, loopback, devices and pairing alone", () => {
    const none = { roles: [], controlUsers: [] };
    const rules = new IdentityRoles({ overlay: none, trustedProxy: none });
    for (const method of ["token", "password", "loopback", "device", "pairing"] as const) {
      const principal: Principal = { method, clientIp: "127.0.0.1" };
      for (const role of ROLES) expect(() => rules.assertMayConnect(principal, role), `${method} ${role}`).not.toThrow();
      expect(() => rules.assertOperator(principal), method).not.toThrow();
    }
  });
});
