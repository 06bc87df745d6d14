import { GatewayError } from "@gw/contracts";
import type { Access } from "./permissions.js";

/**
 * Which sessions a connection may use. control and node connections name any session; a webchat
 * connection only its owner's: the key `webchat:<owner>` and its threads `webchat:<owner>:<name>`.
 * The owner is the user an identity-bearing method vouched for (overlay, trusted proxy); with a
 * shared secret or loopback there is no personal identity, only the gateway's operator, so the
 * owner is `operator` (docs/decisions.md, Authentication).
 */
export const WEBCHAT_PREFIX = "webchat";
export const SHARED_OWNER = "operator";

/** `:` separates an owner from a thread name and `%` escapes, so neither may stand in an owner. */
function ownerToken(user: string): string {
  return user.replace(/[%:]/g, (c) => (c === "%" ? "%25" : "%3A"));
}

/** The session-key root a connection is confined to, or undefined when it may use any session. */
export function sessionHome(access: Access, user: string | undefined): string | undefined {
  if (access !== "webchat") return undefined;
  return `${WEBCHAT_PREFIX}:${ownerToken(user ?? SHARED_OWNER)}`;
}

export function inHome(home: string | undefined, key: string): boolean {
  return home === undefined || key === home || (key.startsWith(home) && key.charCodeAt(home.length) === 58 /* : */);
}

export function assertInHome(home: string | undefined, key: string, what = "session"): void {
  if (inHome(home, key)) return;
  throw new GatewayError(
    "FORBIDDEN",
    `this webchat connection may use only its own sessions (${home} and ${home}:<name>), not the ${what} ${JSON.stringify(key)}`,
  );
}
