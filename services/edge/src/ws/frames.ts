import {
  describeIssues,
  type ErrorCodeName,
  type ErrorFrame,
  type EventFrame,
  exceedsJsonDepth,
  type FrameId,
  GatewayError,
  jsonDepthMessage,
  topLevelPrimitive,
  isGatewayError,
  type RequestFrame,
  RequestFrameSchema,
  type SuccessFrame,
} from "@gw/contracts";
import { currentRequestId } from "@gw/bus";
import type { Logger } from "@gw/runtime";
import { genericMessage, isServerFailure } from "../error-detail.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

export type ParsedFrame = { ok: true; frame: RequestFrame } | { ok: false; id: FrameId; error: GatewayError };

function echoableId(value: unknown): FrameId {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value.length <= 128) return value;
  return null;
}

/**
 * The envelope when it is plainly valid (nearly every frame), checked without zod: the same
 * rules as RequestFrameSchema, which still judges, and words the error for, everything else.
 */
function plainRequestFrame(value: Record<string, unknown>): RequestFrame | undefined {
  const { jsonrpc, id, method, params } = value;
  if (jsonrpc !== "2.0" || typeof id !== "number" || !Number.isFinite(id)) return undefined;
  if (typeof method !== "string" || method.length < 1 || method.length > 128) return undefined;
  if (params === undefined) return { jsonrpc, id, method };
  if (typeof params !== "object" || params === null || Array.isArray(params)) return undefined;
  return { jsonrpc, id, method, params: params as Record<string, unknown> };
}

/** Text (or binary holding UTF-8) -> a validated SPEC §1 request envelope, or the error to answer with. */
export function parseRequestFrame(raw: Buffer): ParsedFrame {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { ok: false, id: null, error: new GatewayError("INVALID_REQUEST", "frame is not valid UTF-8") };
  }
  if (exceedsJsonDepth(text)) {
    const id = echoableId(topLevelPrimitive(text, "id"));
    return { ok: false, id, error: new GatewayError("INVALID_REQUEST", `frame ${jsonDepthMessage()}`) };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return {
      ok: false,
      id: null,
      error: new GatewayError("INVALID_REQUEST", `invalid JSON: ${(err as Error).message}`),
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      id: null,
      error: new GatewayError("INVALID_REQUEST", "a frame must be a JSON object"),
    };
  }
  const id = echoableId((value as { id?: unknown }).id);
  if (!("id" in value) || (value as { id?: unknown }).id === null) {
    return { ok: false, id: null, error: new GatewayError("INVALID_REQUEST", "request frame has no id") };
  }
  const plain = plainRequestFrame(value as Record<string, unknown>);
  if (plain !== undefined) return { ok: true, frame: plain };
  const parsed = RequestFrameSchema.safeParse(value);
  if (!parsed.success) {
    return { ok: false, id, error: new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "")) };
  }
  return { ok: true, frame: parsed.data };
}

export function successFrame(id: FrameId, payload: Record<string, unknown>): SuccessFrame {
  return { id, ok: true, payload };
}

/**
 * The one WS error mapper: typed errors pass through, anything else is INTERNAL and only logged.
 * A server-side failure's own words (a provider's URL and host...) reach only a connection that
 * `seesDetail` (control); any other gets the catalogue's message and the request id, in the
 * message and as `details.requestId`, and the log has the words under that id (error-detail.ts).
 * Called in the request's trace, whose id that is.
 */
export function errorFrame(id: FrameId, err: unknown, logger: Logger, seesDetail = false): ErrorFrame {
  if (!isGatewayError(err)) {
    logger.error({ err }, "unexpected error while handling a request");
    return { id, ok: false, error: seesDetail ? { code: "INTERNAL", message: "internal error" } : withheld("INTERNAL", undefined) };
  }
  const hidden = !seesDetail && isServerFailure(err.code);
  if (err.code === "INTERNAL") logger.error({ err }, "internal error");
  // The client gets our message; what a library said (the cause), and what it is not shown, go to the log only.
  else if (err.cause !== undefined || hidden) logger.warn({ err }, "request failed");
  if (hidden) return { id, ok: false, error: withheld(err.code, err.details) };
  const error: ErrorFrame["error"] = { code: err.code, message: err.message };
  if (err.details) error.details = err.details;
  return { id, ok: false, error };
}

function withheld(code: ErrorCodeName, details: Record<string, unknown> | undefined): ErrorFrame["error"] {
  const requestId = currentRequestId();
  const error: ErrorFrame["error"] = { code, message: genericMessage(code, requestId) };
  if (requestId !== undefined) error.details = { ...details, requestId };
  else if (details !== undefined) error.details = details;
  return error;
}

export function eventFrame(event: string, payload: Record<string, unknown>): EventFrame {
  return { event, payload };
}
