import { encodeTransient, errorCodeFromProto, errorCodeToProto, GatewayError, isGatewayError, RpcReply } from "@gw/contracts";
import type { HandlerErrorSink } from "./bus.js";

/** The typed error a caller sees for whatever a handler threw. */
export function toCallerError(err: unknown, subject: string, sink?: HandlerErrorSink): GatewayError {
  if (isGatewayError(err)) return err;
  sink?.(err, subject);
  return new GatewayError("INTERNAL", undefined, { cause: err });
}

export function encodeReplyResult(result: Uint8Array): Uint8Array {
  // A view, not a copy: encoding copies the bytes once, into the reply.
  const value = Buffer.from(result.buffer, result.byteOffset, result.byteLength);
  // Transient: the reply goes to the socket and is dropped.
  return encodeTransient(RpcReply, { outcome: { $case: "result", value } });
}

export function encodeReplyError(err: GatewayError): Uint8Array {
  return encodeTransient(RpcReply, {
    outcome: {
      $case: "error",
      value: { code: errorCodeToProto(err.code), message: err.message, details: err.details },
    },
  });
}

export function decodeReply(bytes: Uint8Array): Uint8Array {
  let reply: RpcReply;
  try {
    reply = RpcReply.decode(bytes);
  } catch (cause) {
    throw new GatewayError("INTERNAL", "malformed reply on the bus", { cause });
  }
  const outcome = reply.outcome;
  if (outcome?.$case === "result") return outcome.value;
  if (outcome?.$case === "error") {
    const { code, message, details } = outcome.value;
    throw new GatewayError(errorCodeFromProto(code), message, details ? { details } : undefined);
  }
  return new Uint8Array(0);
}
