export { type AddressClass, classifyAddress, type EmbeddingKind, isPublicAddress } from "./address-class.js";
export { DEFAULT_RETRY, type RetryOptions, type RetryPolicy, retryDelayMs, retryWithBackoff } from "./backoff.js";
export { type BoundedBody, readBounded } from "./bounded-read.js";
export { defaultErrorMessage, type ErrorBodyHook, type ErrorBodyInfo, type ResponseHeaders } from "./error-body.js";
export { createHttpClient, HttpClient } from "./http-client.js";
export type { Download, DownloadOptions, HttpClientOptions, HttpResponse, JsonResponse, RequestOptions } from "./http-client-types.js";
export { HttpError, type HttpErrorKind, isRetryableStatus, SsrfError } from "./http-error.js";
export type { BodyOptions } from "./request-body.js";
export type { ResponseBody } from "./response-body.js";
export { parseRetryAfter, retryAfterFromBody } from "./retry-after.js";
export { createScrubber, type Scrubber } from "./scrub.js";
export { readSse, readSseBatches, type ReadSseOptions, type SseBatches, type SseEvent } from "./sse.js";
export {
  checkHost,
  createGuardedAgent,
  createGuardedFetch,
  guardedLookup,
  guardUrl,
  type ResolveAll,
  type SsrfPolicy,
  STRICT_SSRF_POLICY,
} from "./ssrf-guard.js";
export type { QueryValue } from "./target.js";
