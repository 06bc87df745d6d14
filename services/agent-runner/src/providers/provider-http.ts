import { createHttpClient, type HttpClient, HttpError } from "@gw/http-client";
import { ProviderError } from "./model-provider.js";

export interface HttpProviderConfig {
  name: string;
  baseUrl: string;
  apiKey?: string;
  /** Per attempt: waiting for the response headers, and the longest silence inside a stream. */
  timeoutMs: number;
  /** Other configured secrets to keep out of this provider's error messages. */
  secrets?: readonly string[];
}

/** One keep-alive pool per configured provider; its own API key is always scrubbed from errors. */
export function providerClient(config: HttpProviderConfig, authHeaders: Record<string, string>): HttpClient {
  return createHttpClient({
    name: config.name,
    baseUrl: config.baseUrl,
    headers: authHeaders,
    secrets: [...(config.apiKey ? [config.apiKey] : []), ...(config.secrets ?? [])],
    timeoutMs: config.timeoutMs,
  });
}

/**
 * The provider port speaks ProviderError; the transport's HttpError carries the same
 * status/retryable/retryAfterMs and an already scrubbed message. Anything else (an abort
 * reason, a ProviderError from the stream's own checks) passes through.
 */
export function asProviderError(err: unknown): unknown {
  if (!(err instanceof HttpError)) return err;
  return new ProviderError(err.message, { status: err.status, retryable: err.retryable, retryAfterMs: err.retryAfterMs, cause: err });
}

/**
 * One stream event's JSON. An event that is not JSON is the provider failing (MODEL_ERROR, like
 * a stream cut short, and as retryable), not a fault of ours; the bad text stays in the cause
 * only, since the message reaches the client.
 */
export function parseStreamEvent<T>(data: string, provider: string): T {
  try {
    return JSON.parse(data) as T;
  } catch (err) {
    throw new ProviderError(`${provider} stream sent an event that is not JSON`, { retryable: true, cause: err });
  }
}
