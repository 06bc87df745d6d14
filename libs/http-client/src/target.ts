import { guardUrl, type SsrfPolicy } from "./ssrf-guard.js";

export type QueryValue = string | number | boolean | undefined;

/** Where one request goes, and whether it leaves the configured upstream. */
export interface Target {
  origin: string;
  /** Path and query, as sent in the request line. */
  path: string;
  href: string;
  /** Outside the base URL's origin: SSRF-guarded, and sent without the client's default headers. */
  foreign: boolean;
}

const ABSOLUTE = /^[a-z][a-z0-9+.-]*:/i;

function withQuery(path: string, query: Record<string, QueryValue> | undefined): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.append(key, String(value));
  const text = params.toString();
  if (text === "") return path;
  return `${path}${path.includes("?") ? "&" : "?"}${text}`;
}

/** The configured upstream, parsed once: requests name paths below it. */
export class BaseUrl {
  readonly origin: string;
  private readonly prefix: string;

  constructor(baseUrl: string) {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new TypeError(`invalid base URL: ${baseUrl}`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`base URL must be http(s): ${baseUrl}`);
    if (url.username || url.password) throw new TypeError("base URL must not hold credentials; use headers");
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, "");
  }

  /** `path` below the base: `chat/completions` and `/chat/completions` both land under `/v1`. */
  join(path: string): string {
    return `${this.prefix}/${path.replace(/^\/+/, "")}`;
  }
}

/**
 * Resolves a request's `path`: relative paths go below the base URL (never off its origin: a
 * leading `//` is just a slash), absolute http(s) URLs are taken as they are. A target outside
 * the base's origin is checked against the SSRF policy here, before anything is sent.
 */
export function resolveTarget(
  base: BaseUrl | undefined,
  path: string,
  query: Record<string, QueryValue> | undefined,
  ssrf: SsrfPolicy,
): Target {
  if (!ABSOLUTE.test(path)) {
    if (base === undefined) throw new TypeError(`a relative path (${path}) needs a client with a baseUrl`);
    const full = withQuery(base.join(path), query);
    return { origin: base.origin, path: full, href: base.origin + full, foreign: false };
  }
  const url = new URL(path);
  const foreign = base === undefined || url.origin !== base.origin;
  if (foreign) guardUrl(url, ssrf);
  else if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`not an http(s) URL: ${path}`);
  const full = withQuery(url.pathname + url.search, query);
  return { origin: url.origin, path: full, href: url.origin + full, foreign };
}
