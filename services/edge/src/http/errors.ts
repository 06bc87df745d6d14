import { ERROR_CATALOGUE, GatewayError, type HttpErrorBody, isGatewayError } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { FastifyReply } from "fastify";
import { genericMessage, isServerFailure } from "../error-detail.js";

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

/** Every HTTP answer carries one (`x-request-id`), and the log lines about it name it too. */
export const REQUEST_ID_HEADER = "x-request-id";

/** An HTTP error answer: the status, the headers it needs, and the SPEC §7 body. */
export interface HttpErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: HttpErrorBody;
}

/**
 * The one HTTP error mapper, for every HTTP answer (routes, refused WebSocket upgrades, errors
 * inside an SSE stream): catalogue status and type, `Retry-After` when rate limited, `param`
 * when the error names the parameter at fault. Server-side failures (5xx: an upstream's error,
 * a dead service, anything untyped) get the catalogue's generic message and the request id:
 * what went wrong, with its upstream URLs and hosts, goes to the log under that id only
 * (DESIGN §10).
 */
export function httpErrorResponse(err: unknown, logger: Logger, requestId?: string): HttpErrorResponse {
  const headers: Record<string, string> = requestId === undefined ? {} : { [REQUEST_ID_HEADER]: requestId };
  const typed = isGatewayError(err) ? err : fromFastifyError(err as FastifyLikeError);
  if (typed === undefined) {
    logger.error({ err, requestId }, "unexpected error while handling an HTTP request");
    return { status: 500, headers, body: { error: { message: genericMessage("INTERNAL", requestId), type: "api_error" } } };
  }
  const spec = ERROR_CATALOGUE[typed.code];
  const retryAfter = typed.details?.retryAfterSeconds;
  if (typed.code === "RATE_LIMITED" && typeof retryAfter === "number") headers["retry-after"] = String(retryAfter);
  if (isServerFailure(typed.code)) {
    const line = { err: typed, code: typed.code, requestId };
    if (typed.code === "INTERNAL") logger.error(line, "internal error");
    else logger.warn(line, "request failed");
    return { status: spec.httpStatus, headers, body: { error: { message: genericMessage(typed.code, requestId), type: spec.httpType } } };
  }
  const param = typed.details?.param;
  return {
    status: spec.httpStatus,
    headers,
    body: { error: { message: typed.message, type: spec.httpType, ...(typeof param === "string" ? { param } : {}) } },
  };
}

export function sendHttpError(reply: FastifyReply, err: unknown, logger: Logger): FastifyReply {
  const { status, headers, body } = httpErrorResponse(err, logger, reply.request.id);
  return reply.status(status).headers(headers).send(body);
}
