import type { ErrorBodyHook, ResponseHeaders } from "./error-body.js";
import type { BodyOptions } from "./request-body.js";
import type { ResponseBody } from "./response-body.js";
import type { SsrfPolicy } from "./ssrf-guard.js";
import type { QueryValue } from "./target.js";

// What HttpClient takes and answers (http-client.ts).

export interface HttpClientOptions {
  /** The upstream's name in error messages: `openai`, `telegram`, `http.fetch`. */
  name: string;
  /** The configured upstream; relative request paths go below it. */
  baseUrl?: string;
  /** Sent with every request to the base URL's origin, never elsewhere. */
  headers?: Record<string, string>;
  /** Values removed from every error message and body excerpt (API keys, tokens). */
  secrets?: readonly string[];
  /** Default deadline per request. Default 30 s. */
  timeoutMs?: number;
  /** Largest body requestJson reads. Default 8 MiB. */
  maxBodyBytes?: number;
  /** How much of an error body is read for its message. Default 8 KiB. */
  maxErrorBodyBytes?: number;
  /** Where targets outside the base URL's origin may lead. Default: public addresses only. */
  ssrf?: SsrfPolicy;
  /** Reads the platform's error bodies (message, Retry-After in the body). */
  errorBody?: ErrorBodyHook;
  /** Keep-alive pool per origin. */
  pool?: { connections?: number; keepAliveTimeoutMs?: number };
}

export interface RequestOptions extends BodyOptions {
  /** Default GET, or POST when a body is given. */
  method?: string;
  /** Below the base URL (`chat/completions`), or an absolute http(s) URL. */
  path: string;
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** This request's deadline instead of the client's. */
  timeoutMs?: number;
  /** Longest silence while a streamed body is read; default the deadline. */
  idleMs?: number;
  /** Statuses that are an answer rather than an HttpError; default 2xx. */
  okStatus?: (status: number) => boolean;
}

export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  /** Streamed; stopping early keeps the connection. Read errors are HttpErrors. */
  body: ResponseBody;
}

export interface JsonResponse<T> {
  status: number;
  headers: ResponseHeaders;
  /** The parsed body; undefined for an empty one. */
  data: T;
}

/** How a request's deadline reads in its error; downloads share one across redirects. */
export interface Deadline {
  at: number;
  ms: number;
}

export interface DownloadOptions {
  maxBytes: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** One deadline for the redirects and the body; default the client's. */
  timeoutMs?: number;
  /** Default 3; past them the redirect itself is the answer (an HttpError unless okStatus takes it). */
  maxRedirects?: number;
  /** Over maxBytes: `error` (default; half a file is no file) or `truncate`. */
  overflow?: "error" | "truncate";
  /** Statuses that are an answer rather than an HttpError; default 2xx. */
  okStatus?: (status: number) => boolean;
}

export interface Download {
  status: number;
  headers: ResponseHeaders;
  /** The URL that answered, after redirects. */
  url: string;
  bytes: Buffer;
  truncated: boolean;
}
