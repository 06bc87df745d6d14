import { describeIssues, type EncodedJson, GatewayError, type Role } from "@gw/contracts";
import type { z } from "zod";
import type { Principal } from "../auth/auth-gate.js";
import { type Access, forbiddenMethodMessage, mayCall } from "../auth/permissions.js";

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

/**
 * A payload object, or one a service encoded already (EncodedJson): the connection splices
 * that into its response frame instead of parsing and stringifying it again.
 */
/** A payload with the response frame's optional `meta` (SPEC §4.1 `send`: `meta.cached`). */
export class PayloadWithMeta {
  constructor(
    readonly payload: Record<string, unknown>,
    readonly meta: Record<string, unknown>,
  ) {}
}

export type MethodResult = Record<string, unknown> | EncodedJson<Record<string, unknown>> | PayloadWithMeta;

export interface MethodDefinition<S extends z.ZodType> {
  name: string;
  params: S;
  handler: (params: z.output<S>, ctx: CallContext) => Promise<MethodResult>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the registry stores methods of every param type
type AnyMethod = MethodDefinition<any>;

export function defineMethod<S extends z.ZodType>(def: MethodDefinition<S>): MethodDefinition<S> {
  return def;
}

/** `method -> { schema, handler }`: params are validated once here, handlers get typed input. */
export class MethodRegistry {
  private readonly methods = new Map<string, AnyMethod>();

  register(...defs: AnyMethod[]): this {
    for (const def of defs) {
      if (this.methods.has(def.name)) throw new Error(`method ${def.name} registered twice`);
      this.methods.set(def.name, def);
    }
    return this;
  }

  has(name: string): boolean {
    return this.methods.has(name);
  }

  names(): string[] {
    return [...this.methods.keys()].sort();
  }

  async dispatch(name: string, rawParams: unknown, ctx: CallContext): Promise<MethodResult> {
    const def = this.methods.get(name);
    if (def === undefined) throw new GatewayError("METHOD_NOT_FOUND", `unknown method: ${name}`);
    // Who may call what is one table (auth/permissions.ts), not a field of each method.
    if (!mayCall(ctx.access, name)) throw new GatewayError("FORBIDDEN", forbiddenMethodMessage(ctx.access, name));
    const parsed = def.params.safeParse(rawParams ?? {});
    if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "params"));
    return def.handler(parsed.data, ctx);
  }
}
