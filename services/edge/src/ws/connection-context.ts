import type { Role } from "@gw/contracts";
import type { Principal } from "../auth/auth-gate.js";
import { type Access, eventFamily, mayReceive } from "../auth/permissions.js";
import { assertInHome, sessionHome } from "../auth/session-scope.js";
import type { CallContext } from "../call-context.js";
import type { EventHub } from "../events/event-hub.js";

/** What a connected connection lends the context of its method calls. */
export interface ContextOwner {
  readonly id: string;
  readonly deps: { events: EventHub };
  send(frame: object): void;
  onClose(cleanup: () => void): void;
  setDeadline(ms: number, onEnd: () => void): void;
  close(code: number, reason: string): void;
}

/** A connection's identity for method calls; its methods live on the prototype, not per socket. */
export class ConnectionContext implements CallContext {
  /** The session-key root a webchat connection is confined to (auth/session-scope.ts). */
  readonly home: string | undefined;

  constructor(
    private readonly conn: ContextOwner,
    readonly role: Role,
    readonly access: Access,
    readonly principal: Principal,
  ) {
    this.home = sessionHome(access, principal.user);
  }

  get connId(): string {
    return this.conn.id;
  }

  assertSession(key: string): void {
    assertInHome(this.home, key);
  }

  watchSession(key: string): void {
    this.conn.deps.events.watchSession(this.conn.id, key);
  }

  unwatchSession(key: string): void {
    this.conn.deps.events.unwatchSession(this.conn.id, key);
  }

  sendEvent(event: string, payload: object): void {
    if (mayReceive(this.access, eventFamily(event))) this.conn.send({ event, payload });
  }

  onClose(cleanup: () => void): void {
    this.conn.onClose(cleanup);
  }

  setDeadline(ms: number, onEnd: () => void): void {
    this.conn.setDeadline(ms, onEnd);
  }

  close(code: number, reason: string): void {
    this.conn.close(code, reason);
  }
}
