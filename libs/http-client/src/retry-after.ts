/** RFC 9110 delay-seconds (fractions tolerated: some servers send them). */
const SECONDS = /^\s*(\d+(?:\.\d+)?)\s*$/;
/** Every HTTP-date form (IMF-fixdate, RFC 850, asctime) starts with the day's name. */
const HTTP_DATE = /^\s*(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s/i;

/**
 * `Retry-After` as milliseconds from `now`: delay-seconds or an HTTP-date (a date in the past
 * is 0). Undefined when absent or unreadable, so garbage never turns into "retry at once".
 */
export function parseRetryAfter(header: string | readonly string[] | null | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value !== "string") return undefined;
  const seconds = SECONDS.exec(value);
  if (seconds) return Math.round(Number(seconds[1]) * 1000);
  if (!HTTP_DATE.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function secondsToMs(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : undefined;
}

/**
 * The wait a JSON error body asks for, for clients whose platform says it there rather than (or
 * more precisely than) in the header: Telegram's `parameters.retry_after` and Discord's
 * `retry_after`, both in seconds (Discord's with a fraction). Undefined for anything else.
 */
export function retryAfterFromBody(json: unknown): number | undefined {
  if (json === null || typeof json !== "object") return undefined;
  const body = json as { retry_after?: unknown; parameters?: { retry_after?: unknown } | null };
  return secondsToMs(body.parameters?.retry_after) ?? secondsToMs(body.retry_after);
}
