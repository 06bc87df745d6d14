import {
  describeIssues,
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
import type { Logger } from "@gw/runtime";

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

/** The one WS error mapper: typed errors pass through, anything else is INTERNAL and only logged. */
export function errorFrame(id: FrameId, err: unknown, logger: Logger): ErrorFrame {
  if (isGatewayError(err)) {
    if (err.code === "INTERNAL") logger.error({ err }, "internal error");
    // The client gets our message; what a library said (the cause) goes to the log only.
    else if (err.cause !== undefined) logger.warn({ err }, "request failed");
    const error: ErrorFrame["error"] = { code: err.code, message: err.message };
    if (err.details) error.details = err.details;
    return { id, ok: false, error };
  }
  logger.error({ err }, "unexpected error while handling a request");
  return { id, ok: false, error: { code: "INTERNAL", message: "internal error" } };
}

export function eventFrame(event: string, payload: Record<string, unknown>): EventFrame {
  return { event, payload };
}
