/**
 * What went wrong with an outbound call, so callers can decide without parsing messages:
 * `status` an HTTP status that is not acceptable, `timeout` the deadline or an idle limit,
 * `network` no answer or a dropped connection, `ssrf` a refused target, `too_large` a body
 * over its byte limit, `invalid_response` a body that does not parse as promised.
 */
export type HttpErrorKind = "status" | "timeout" | "network" | "ssrf" | "too_large" | "invalid_response";

export interface HttpErrorInit {
  kind: HttpErrorKind;
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
  /** The platform said its limit covers every request of these credentials, not this route alone. */
  accountWide?: boolean;
  /** The target, already scrubbed of credentials. */
  url?: string;
  /** The start of the error body, already scrubbed; at most the client's error-body limit. */
  body?: string;
  cause?: unknown;
}

/**
 * The one error type of outbound HTTP (DESIGN §9: `{status, retryable, retryAfterMs}`). Its
 * message and `body` never hold a configured secret or URL credential: the client scrubs them
 * before the error is built, because these messages travel to clients and logs.
 */
export class HttpError extends Error {
  readonly kind: HttpErrorKind;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  /** Set by the client's errorBody hook (Discord's global rate limit, a WhatsApp number's throughput). */
  readonly accountWide: boolean;
  readonly url: string | undefined;
  readonly body: string | undefined;

  constructor(message: string, init: HttpErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "HttpError";
    this.kind = init.kind;
    this.status = init.status;
    this.retryable = init.retryable;
    this.retryAfterMs = init.retryAfterMs;
    this.accountWide = init.accountWide ?? false;
    this.url = init.url;
    this.body = init.body;
  }
}

/**
 * A refused target. It carries `code: "ESSRF"` like a Node errno error because it also travels
 * through `net`'s lookup callback, where Node expects that shape.
 */
export class SsrfError extends HttpError {
  readonly code = "ESSRF";

  constructor(message: string, url?: string) {
    super(message, { kind: "ssrf", retryable: false, url });
    this.name = "SsrfError";
  }
}

/** 429, 408 and 5xx are worth another try; any other status will be answered the same again. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

/** Finds an SsrfError in an error or its causes (undici wraps connect failures). */
export function findSsrfError(err: unknown): SsrfError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e instanceof SsrfError) return e;
  return undefined;
}
