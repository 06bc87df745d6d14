import { describeIssues, type EncodedJson, GatewayError, type MethodName, type MethodResultOf } from "@gw/contracts";
import type { z } from "zod";
import { forbiddenMethodMessage, mayCall } from "../auth/permissions.js";
import type { CallContext } from "../call-context.js";

/** A payload with the response frame's optional `meta` (SPEC §4.1 `send`: `meta.cached`). */
export class PayloadWithMeta<T = Record<string, unknown>> {
  constructor(
    readonly payload: T,
    readonly meta: Record<string, unknown>,
  ) {}
}

/**
 * What a method's handler answers: its result (`METHOD_RESULTS` in @gw/contracts says the shape
 * of each method's), that result already encoded by a service (EncodedJson: the connection
 * splices it into the response frame instead of parsing and stringifying it again), or the
 * result with the frame's `meta`.
 */
export type MethodResult<N extends MethodName = MethodName> =
  | MethodResultOf<N>
  | EncodedJson<MethodResultOf<N>>
  | PayloadWithMeta<MethodResultOf<N>>;

/** A method is named in @gw/contracts' METHOD_RESULTS (a new one adds its result schema there first). */
export interface MethodDefinition<N extends MethodName, S extends z.ZodType> {
  name: N;
  params: S;
  handler: (params: z.output<S>, ctx: CallContext) => Promise<MethodResult<N>>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the registry stores methods of every param type
type AnyMethod = MethodDefinition<any, any>;

export function defineMethod<N extends MethodName, S extends z.ZodType>(def: MethodDefinition<N, S>): MethodDefinition<N, S> {
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

  /** Not `async` (a promise fewer per call): every failure, a handler's synchronous throw too, is a rejection. */
  dispatch(name: string, rawParams: unknown, ctx: CallContext): Promise<MethodResult> {
    try {
      const def = this.methods.get(name);
      if (def === undefined) throw new GatewayError("METHOD_NOT_FOUND", `unknown method: ${name}`);
      // Who may call what is one table (auth/permissions.ts), not a field of each method.
      if (!mayCall(ctx.access, name)) throw new GatewayError("FORBIDDEN", forbiddenMethodMessage(ctx.access, name));
      const parsed = def.params.safeParse(rawParams ?? {});
      if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "params"));
      return def.handler(parsed.data, ctx);
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
