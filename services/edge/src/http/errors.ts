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

/** The one HTTP error mapper: SPEC §7 body, catalogue status, Retry-After when rate limited. */
export function sendHttpError(reply: FastifyReply, err: unknown, logger: Logger): FastifyReply {
  const typed = isGatewayError(err) ? err : fromFastifyError(err as FastifyLikeError);
  if (typed === undefined) {
    logger.error({ err }, "unexpected error while handling an HTTP request");
    const body: HttpErrorBody = { error: { message: "internal error", type: "api_error" } };
    return reply.status(500).send(body);
  }
  if (typed.code === "INTERNAL") logger.error({ err: typed }, "internal error");
  const spec = ERROR_CATALOGUE[typed.code];
  const retryAfter = typed.details?.retryAfterSeconds;
  if (typed.code === "RATE_LIMITED" && typeof retryAfter === "number")
    reply.header("retry-after", String(retryAfter));
  const body: HttpErrorBody = { error: { message: typed.message, type: spec.httpType } };
  return reply.status(spec.httpStatus).send(body);
}
