import type { Role } from "@gw/contracts";
import type { Principal } from "./auth/auth-gate.js";
import type { Access } from "./auth/permissions.js";

/** What a method handler may know about, and do to, the connection that called it. */
export interface CallContext {
  connId: string;
  role: Role;
  /** The connection's row in the permission table (its role, or `pairing`). */
  access: Access;
  principal: Principal;
  /**
   * Throws FORBIDDEN unless this connection may use the session (a webchat connection only
   * its own, auth/session-scope.ts).
   */
  assertSession(key: string): void;
  /** Session events of this key reach this connection from now on (SPEC §6). */
  watchSession(key: string): void;
  /** Stops the events of a session this connection watched (control connections still get all). */
  unwatchSession(key: string): void;
  /** Sends this connection an event, if its access lets it receive that event's family. */
  sendEvent(event: string, payload: object): void;
  /** Runs `cleanup` once, when the socket closes (at once if it has closed already). */
  onClose(cleanup: () => void): void;
  /** Replaces the connection's deadline: `onEnd` runs after `ms` unless the socket closed first. */
  setDeadline(ms: number, onEnd: () => void): void;
  close(code: number, reason: string): void;
}
