import { describeIssues, type EncodedJson, GatewayError } from "@gw/contracts";
import type { z } from "zod";
import { forbiddenMethodMessage, mayCall } from "../auth/permissions.js";
import type { CallContext } from "../call-context.js";

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
