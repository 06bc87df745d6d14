import type { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { encodeTransient, GatewayError } from "@gw/contracts";
import type { Bus, RequestContext, Unsubscribe } from "./bus.js";
import { beginSpan } from "./spans.js";
import type { Subjects } from "./subjects.js";

/** The shape ts-proto generates for every message. */
export interface MessageCodec<T> {
  encode(message: T, writer?: BinaryWriter): BinaryWriter;
  decode(input: BinaryReader | Uint8Array, length?: number): T;
}

export interface RpcDefinition<Req, Res> {
  service: string;
  method: string;
  /** The service that serves it, when `service` is a subject group of it (a sessions partition); else `service`. */
  owner?: string;
  request: MessageCodec<Req>;
  response: MessageCodec<Res>;
}

export function defineRpc<Req, Res>(def: RpcDefinition<Req, Res>): RpcDefinition<Req, Res> {
  return def;
}

function decodeOrThrow<T>(codec: MessageCodec<T>, bytes: Uint8Array, what: string): T {
  try {
    return codec.decode(bytes);
  } catch (cause) {
    throw new GatewayError("INVALID_REQUEST", `malformed ${what}`, { cause });
  }
}

/**
 * Calls a typed RPC over the bus. Written with `then` rather than `async`/`await`: on a hot RPC
 * every promise counts (each one runs the async-context hooks trace propagation needs).
 */
export function callRpc<Req, Res>(
  bus: Bus,
  subjects: Subjects,
  def: RpcDefinition<Req, Res>,
  request: Req,
  opts: { timeoutMs: number },
): Promise<Res> {
  let data: Uint8Array;
  try {
    // Transient (encode.ts): a request and a reply are decoded by whoever gets them, and dropped.
    data = encodeTransient(def.request, request);
  } catch (err) {
    return Promise.reject(err);
  }
  return bus.request(subjects.rpc(def.service, def.method), data, opts).then((bytes) => decodeOrThrow(def.response, bytes, `${def.method} reply`));
}

/**
 * Serves a typed RPC in the service's queue group, so replicas share the load. Each request is
 * a server span of the service when tracing is on (both buses run a handler in a span of its own,
 * a child of the caller's).
 */
export function serveRpc<Req, Res>(
  bus: Bus,
  subjects: Subjects,
  def: RpcDefinition<Req, Res>,
  handler: (request: Req, ctx: RequestContext) => Promise<Res> | Res,
): Unsubscribe {
  const method = `${def.service}.${def.method}`;
  const encode = (response: Res) => encodeTransient(def.response, response);
  /** A synchronous handler's reply stays synchronous; a failure is always a rejection. */
  const serve = (data: Uint8Array, ctx: RequestContext): Promise<Uint8Array> | Uint8Array => {
    try {
      const response = handler(decodeOrThrow(def.request, data, `${def.method} request`), ctx);
      return response instanceof Promise ? response.then(encode) : encode(response);
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return bus.handle(
    subjects.rpc(def.service, def.method),
    (data, ctx) => {
      const span = beginSpan(def.owner ?? def.service, method, "server");
      if (span === undefined) return serve(data, ctx);
      span.set("rpc.system", "nats").set("rpc.service", def.service).set("rpc.method", def.method);
      return Promise.resolve(serve(data, ctx)).then(
        (reply) => {
          span.end();
          return reply;
        },
        (err: unknown) => {
          span.end(err instanceof GatewayError ? err.code : "INTERNAL");
          throw err;
        },
      );
    },
    { queue: def.service, method },
  );
}
