import { ErrorCode } from "./gen/gateway/v1/common.pb.js";

/** The error catalogue: every code the gateway can return, in one place (STYLE §3). */
export type ErrorCodeName = Exclude<keyof typeof ErrorCode, "UNSPECIFIED">;

export type HttpErrorType = "invalid_request_error" | "authentication_error" | "rate_limited" | "api_error";

export interface ErrorSpec {
  /** Default message when the thrower gives none. */
  message: string;
  /** HTTP status for the HTTP surfaces. */
  httpStatus: number;
  /** The SPEC §7 HTTP error `type`. */
  httpType: HttpErrorType;
  /** Whether a client may retry the same request unchanged. */
  retryable: boolean;
}

export const ERROR_CATALOGUE: Readonly<Record<ErrorCodeName, ErrorSpec>> = Object.freeze({
  INVALID_REQUEST: {
    message: "invalid request",
    httpStatus: 400,
    httpType: "invalid_request_error",
    retryable: false,
  },
  UNAUTHORIZED: {
    message: "missing or wrong credentials",
    httpStatus: 401,
    httpType: "authentication_error",
    retryable: false,
  },
  FORBIDDEN: {
    message: "not allowed for this role",
    httpStatus: 403,
    httpType: "authentication_error",
    retryable: false,
  },
  RATE_LIMITED: {
    message: "too many failed authentication attempts",
    httpStatus: 429,
    httpType: "rate_limited",
    retryable: true,
  },
  NOT_CONNECTED: {
    message: "send connect first",
    httpStatus: 401,
    httpType: "authentication_error",
    retryable: false,
  },
  METHOD_NOT_FOUND: {
    message: "unknown method",
    httpStatus: 404,
    httpType: "invalid_request_error",
    retryable: false,
  },
  NOT_FOUND: { message: "not found", httpStatus: 404, httpType: "invalid_request_error", retryable: false },
  CONFLICT: { message: "conflict", httpStatus: 409, httpType: "invalid_request_error", retryable: false },
  PAYLOAD_TOO_LARGE: {
    message: "payload too large",
    httpStatus: 413,
    httpType: "invalid_request_error",
    retryable: false,
  },
  UNAVAILABLE: {
    message: "service unavailable",
    httpStatus: 503,
    httpType: "api_error",
    retryable: true,
  },
  TIMEOUT: { message: "deadline exceeded", httpStatus: 504, httpType: "api_error", retryable: true },
  INTERNAL: { message: "internal error", httpStatus: 500, httpType: "api_error", retryable: false },
  CHANNEL_NOT_FOUND: {
    message: "channel not configured",
    httpStatus: 400,
    httpType: "invalid_request_error",
    retryable: false,
  },
  DELIVERY_FAILED: {
    message: "the platform could not deliver",
    httpStatus: 502,
    httpType: "api_error",
    retryable: false,
  },
  ABORTED: {
    message: "the run was aborted",
    httpStatus: 409,
    httpType: "invalid_request_error",
    retryable: false,
  },
  MODEL_ERROR: {
    message: "the model provider failed",
    httpStatus: 502,
    httpType: "api_error",
    retryable: true,
  },
  NOT_SUPPORTED: {
    message: "not supported by this channel",
    httpStatus: 400,
    httpType: "invalid_request_error",
    retryable: false,
  },
});

export const ERROR_CODE_NAMES = Object.keys(ERROR_CATALOGUE) as ErrorCodeName[];

/** A typed error that services throw and the bus carries; only the edge maps it to the wire. */
export class GatewayError extends Error {
  readonly code: ErrorCodeName;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCodeName,
    message?: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(
      message ?? ERROR_CATALOGUE[code].message,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "GatewayError";
    this.code = code;
    this.details = options?.details;
  }

  get spec(): ErrorSpec {
    return ERROR_CATALOGUE[this.code];
  }
}

export function isGatewayError(err: unknown): err is GatewayError {
  return err instanceof GatewayError;
}

export function errorCodeToProto(code: ErrorCodeName): ErrorCode {
  return ErrorCode[code];
}

export function errorCodeFromProto(code: ErrorCode): ErrorCodeName {
  const name = ErrorCode[code] as keyof typeof ErrorCode | undefined;
  return name === undefined || name === "UNSPECIFIED" ? "INTERNAL" : name;
}
