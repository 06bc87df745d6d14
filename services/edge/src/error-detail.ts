import { ERROR_CATALOGUE, type ErrorCodeName } from "@gw/contracts";

/**
 * Who sees what of a failure (DESIGN §10). A server-side failure, the codes the HTTP surface
 * answers with a 5xx (MODEL_ERROR, UNAVAILABLE, TIMEOUT, INTERNAL, DELIVERY_FAILED), is worded
 * by whatever failed: a provider's URL and host, a bus subject, a platform's refusal, a library's
 * words. Clients get the catalogue's message and the request id instead, and the log has the
 * rest under that id; only control connections (operators) get the words themselves, over
 * WebSocket. Client errors (4xx) are the gateway's own words about the request and stay as
 * they are for everyone.
 */
export function isServerFailure(code: ErrorCodeName): boolean {
  return ERROR_CATALOGUE[code].httpStatus >= 500;
}

/** The catalogue's message for `code`, with the request id to quote to an operator. */
export function genericMessage(code: ErrorCodeName, requestId: string | undefined): string {
  const message = ERROR_CATALOGUE[code].message;
  return requestId === undefined ? message : `${message} (request id ${requestId})`;
}

/** Whether a value read from JSON (an event's `code`) names a catalogue code. */
export function isErrorCode(value: unknown): value is ErrorCodeName {
  return typeof value === "string" && Object.hasOwn(ERROR_CATALOGUE, value);
}
