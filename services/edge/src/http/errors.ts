import { ERROR_CATALOGUE, GatewayError, type HttpErrorBody, isGatewayError } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { FastifyReply } from "fastify";

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message: string;
}

/** Fastify's own failures (body parsing, limits) as typed gateway errors. */
function fromFastifyError(err: FastifyLikeError): GatewayError | undefined {
  if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return new GatewayError("PAYLOAD_TOO_LARGE", "request body is larger than the configured limit");
  }
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new GatewayError("INVALID_REQUEST", err.message);
  }
  return undefined;
}

/** An HTTP error answer: the status, the headers it needs, and the SPEC §7 body. */
export interface HttpErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: HttpErrorBody;
}

/**
 * The one HTTP error mapper, for every HTTP answer (routes, refused WebSocket upgrades, errors
 * inside an SSE stream): catalogue status and type, `Retry-After` when rate limited. Anything
 * that is not a typed error is logged with its cause and answered as a bare internal error.
 */
export function httpErrorResponse(err: unknown, logger: Logger): HttpErrorResponse {
  const typed = isGatewayError(err) ? err : fromFastifyError(err as FastifyLikeError);
  if (typed === undefined) {
    logger.error({ err }, "unexpected error while handling an HTTP request");
    return { status: 500, headers: {}, body: { error: { message: "internal error", type: "api_error" } } };
  }
  if (typed.code === "INTERNAL") logger.error({ err: typed }, "internal error");
  // The client gets our message; what a library said (the cause) goes to the log only.
  else if (typed.cause !== undefined) logger.warn({ err: typed }, "request failed");
  const spec = ERROR_CATALOGUE[typed.code];
  const headers: Record<string, string> = {};
  const retryAfter = typed.details?.retryAfterSeconds;
  if (typed.code === "RATE_LIMITED" && typeof retryAfter === "number") headers["retry-after"] = String(retryAfter);
  return { status: spec.httpStatus, headers, body: { error: { message: typed.message, type: spec.httpType } } };
}

export function sendHttpError(reply: FastifyReply, err: unknown, logger: Logger): FastifyReply {
  const { status, headers, body } = httpErrorResponse(err, logger);
  return reply.status(status).headers(headers).send(body);
}
