import { HttpError, isRetryableStatus } from "./http-error.js";
import { parseRetryAfter } from "./retry-after.js";
import type { Scrubber } from "./scrub.js";

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface ErrorBodyInfo {
  status: number;
  headers: ResponseHeaders;
  /** The start of the body, at most the client's error-body limit. */
  text: string;
  /** The body parsed as JSON, undefined when it is not JSON (or was cut). */
  json: unknown;
}

/**
 * A client's reading of its platform's error bodies. Each field it returns replaces the default:
 * `message` the detail after "answered HTTP 400:", `retryAfterMs` the header's value (e.g. from
 * Telegram's `parameters.retry_after`, see retryAfterFromBody), `retryable` the status rule;
 * `accountWide` (default false) says the limit holds every request of the credentials.
 */
export type ErrorBodyHook = (
  info: ErrorBodyInfo,
) => { message?: string; retryAfterMs?: number; retryable?: boolean; accountWide?: boolean } | undefined;

/** The message most JSON APIs put in their error bodies (OpenAI, Anthropic, Slack, Telegram, Discord, Graph). */
export function defaultErrorMessage(json: unknown): string | undefined {
  if (json === null || typeof json !== "object") return undefined;
  const body = json as { error?: unknown; message?: unknown; description?: unknown; error_description?: unknown };
  const nested = body.error !== null && typeof body.error === "object" ? (body.error as { message?: unknown }).message : undefined;
  for (const candidate of [nested, body.error, body.message, body.description, body.error_description])
    if (typeof candidate === "string" && candidate !== "") return candidate;
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The HttpError for an unacceptable status; everything in it is scrubbed. */
export function statusError(
  name: string,
  href: string,
  info: Omit<ErrorBodyInfo, "json">,
  hook: ErrorBodyHook | undefined,
  scrub: Scrubber,
): HttpError {
  const json = parseJson(info.text);
  const custom = hook?.({ ...info, json });
  const detail = custom?.message ?? defaultErrorMessage(json);
  const retryAfterMs = custom?.retryAfterMs ?? parseRetryAfter(info.headers["retry-after"]);
  return new HttpError(scrub(`${name} answered HTTP ${info.status}${detail ? `: ${detail}` : ""}`), {
    kind: "status",
    status: info.status,
    retryable: custom?.retryable ?? isRetryableStatus(info.status),
    retryAfterMs,
    accountWide: custom?.accountWide === true,
    url: scrub(href),
    body: scrub(info.text),
  });
}
