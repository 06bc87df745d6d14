import { Agent, type Dispatcher } from "undici";
import { readBounded } from "./bounded-read.js";
import { type ErrorBodyHook, statusError } from "./error-body.js";
import type { Deadline, Download, DownloadOptions, HttpClientOptions, HttpResponse, JsonResponse, RequestOptions } from "./http-client-types.js";
import { findSsrfError, HttpError, SsrfError } from "./http-error.js";
import { encodeBody } from "./request-body.js";
import { ResponseBody } from "./response-body.js";
import { type Scrubber, createScrubber } from "./scrub.js";
import { createGuardedAgent, type SsrfPolicy, STRICT_SSRF_POLICY } from "./ssrf-guard.js";
import { BaseUrl, resolveTarget, type Target } from "./target.js";

type Phase = "connect" | "body";

interface FailureContext {
  target: Target;
  caller: AbortSignal | undefined;
  timedOut: boolean;
  deadline: Deadline;
  phase: Phase;
  idleMs: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const is2xx = (status: number) => status >= 200 && status < 300;

const firstHeader = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * One outbound upstream: a keep-alive pool, default headers, a deadline per request linked to
 * the caller's AbortSignal, bounded body reads, and errors that are HttpErrors with secrets and
 * URL credentials scrubbed. Targets outside the base URL's origin (a media URL from a payload,
 * any URL of a client without baseUrl) go through the SSRF guard and without default headers.
 * Create one per upstream at start and `close()` it at shutdown.
 */
export class HttpClient {
  readonly name: string;
  readonly scrub: Scrubber;
  private readonly base: BaseUrl | undefined;
  private readonly defaults: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly maxErrorBodyBytes: number;
  private readonly ssrf: SsrfPolicy;
  private readonly errorBody: ErrorBodyHook | undefined;
  private readonly agentOptions: Agent.Options;
  private agent: Agent | undefined;
  private guarded: Agent | undefined;

  constructor(opts: HttpClientOptions) {
    this.name = opts.name;
    this.base = opts.baseUrl === undefined ? undefined : new BaseUrl(opts.baseUrl);
    this.defaults = lowerCaseKeys(opts.headers ?? {});
    this.scrub = createScrubber(opts.secrets);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxBodyBytes = opts.maxBodyBytes ?? 8 * 1024 * 1024;
    this.maxErrorBodyBytes = opts.maxErrorBodyBytes ?? 8 * 1024;
    this.ssrf = opts.ssrf ?? STRICT_SSRF_POLICY;
    this.errorBody = opts.errorBody;
    this.agentOptions = {
      connections: opts.pool?.connections ?? null,
      keepAliveTimeout: opts.pool?.keepAliveTimeoutMs ?? 10_000,
      // The deadline and idle limits below are the request's; undici's own stay out of the way.
      headersTimeout: 0,
      bodyTimeout: 0,
    };
  }

  /** Sends one request and resolves at the response headers; the body streams (SSE, downloads). */
  async request(opts: RequestOptions): Promise<HttpResponse> {
    const target = resolveTarget(this.base, opts.path, opts.query, this.ssrf);
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    return this.send(target, opts, { at: Date.now() + timeoutMs, ms: timeoutMs }, "stream");
  }

  /**
   * Sends one request and reads the whole answer as JSON within the deadline (at most
   * `maxBytes`). `parse` validates it (a zod schema's `parse` fits); its failure is a
   * non-retryable `invalid_response` HttpError.
   */
  async requestJson<T = unknown>(opts: RequestOptions & { maxBytes?: number; parse?: (data: unknown) => T }): Promise<JsonResponse<T>> {
    const target = resolveTarget(this.base, opts.path, opts.query, this.ssrf);
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const res = await this.send(target, opts, { at: Date.now() + timeoutMs, ms: timeoutMs }, "buffer");
    const maxBytes = opts.maxBytes ?? this.maxBodyBytes;
    const { bytes, truncated } = await readBounded(res.body, maxBytes);
    if (truncated) throw this.invalid(target, `answered with more than ${maxBytes} bytes`, "too_large");
    const text = bytes.toString("utf8");
    let data: unknown;
    try {
      data = text.trim() === "" ? undefined : JSON.parse(text);
    } catch (cause) {
      throw this.invalid(target, "answered with a body that is not JSON", "invalid_response", cause);
    }
    if (opts.parse === undefined) return { status: res.status, headers: res.headers, data: data as T };
    try {
      return { status: res.status, headers: res.headers, data: opts.parse(data) };
    } catch (cause) {
      throw this.invalid(target, `answered with an unexpected body: ${(cause as Error).message}`, "invalid_response", cause);
    }
  }

  /**
   * GETs a URL from outside (a platform's media link, a user's URL) into memory: SSRF-guarded
   * unless it is on the base URL's origin, at most `maxRedirects` redirects each checked again,
   * at most `maxBytes` (over it: a `too_large` HttpError, or `truncated` when asked), all within
   * one deadline. Caller headers go only to the first URL's origin.
   */
  async download(url: string, opts: DownloadOptions): Promise<Download> {
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const deadline = { at: Date.now() + timeoutMs, ms: timeoutMs };
    const maxRedirects = opts.maxRedirects ?? 3;
    let target = resolveTarget(this.base, url, undefined, this.ssrf);
    const firstOrigin = target.origin;
    for (let hop = 0; ; hop++) {
      const headers = target.origin === firstOrigin ? opts.headers : undefined;
      const res = await this.send(target, { headers, signal: opts.signal, okStatus: () => true }, deadline, "buffer");
      const location = firstHeader(res.headers.location);
      if (REDIRECTS.has(res.status) && location !== undefined && hop < maxRedirects) {
        res.body.release();
        target = this.redirectTarget(target, location);
        continue;
      }
      if (!(opts.okStatus ?? is2xx)(res.status)) throw await this.errorFrom(res, target);
      const { bytes, truncated } = await readBounded(res.body, opts.maxBytes);
      if (truncated) {
        res.body.cancel();
        if (opts.overflow !== "truncate") throw this.invalid(target, `answered with more than ${opts.maxBytes} bytes`, "too_large");
      }
      return { status: res.status, headers: res.headers, url: target.href, bytes, truncated };
    }
  }

  /** Closes the keep-alive pools; requests in flight finish first. */
  async close(): Promise<void> {
    await Promise.all([this.agent?.close(), this.guarded?.close()]);
  }

  private redirectTarget(from: Target, location: string): Target {
    let next: URL;
    try {
      next = new URL(location, from.href);
    } catch {
      throw this.invalid(from, "redirected to an invalid URL", "invalid_response");
    }
    if (next.protocol !== "http:" && next.protocol !== "https:")
      throw new SsrfError(`refusing a redirect to ${next.protocol}`, this.scrub(from.href));
    return resolveTarget(this.base, next.href, undefined, this.ssrf);
  }

  /**
   * One exchange within `deadline`, linked to the caller's signal. In "buffer" mode the deadline
   * also covers reading the body; in "stream" mode it ends at the headers and `idleMs` bounds
   * the silences of the body.
   */
  private async send(target: Target, opts: Omit<RequestOptions, "path">, deadline: Deadline, mode: "stream" | "buffer"): Promise<HttpResponse> {
    const caller = opts.signal;
    caller?.throwIfAborted();
    const encoded = encodeBody(opts);
    const { body, contentType } = encoded instanceof Promise ? await encoded : encoded;
    const headers = { ...(target.foreign ? {} : this.defaults), ...lowerCaseKeys(opts.headers ?? {}) };
    if (contentType !== undefined && headers["content-type"] === undefined) headers["content-type"] = contentType;
    const ctl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort(new Error("deadline passed"));
    }, Math.max(0, deadline.at - Date.now()));
    const onAbort = () => ctl.abort(caller?.reason);
    caller?.addEventListener("abort", onAbort, { once: true });
    const unlink = () => {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onAbort);
    };
    const fail = (err: unknown, phase: Phase) => this.failure(err, { target, caller, timedOut, deadline, phase, idleMs: opts.idleMs ?? deadline.ms });
    let res: Dispatcher.ResponseData;
    try {
      res = await this.dispatcher(target.foreign).request({
        origin: target.origin,
        path: target.path,
        method: (opts.method ?? (body === undefined ? "GET" : "POST")) as Dispatcher.HttpMethod,
        headers,
        body,
        signal: ctl.signal,
        bodyTimeout: mode === "stream" ? (opts.idleMs ?? deadline.ms) : 0,
      });
    } catch (err) {
      unlink();
      throw fail(err, "connect");
    }
    // A streamed body stays linked to the caller's signal (an abort cancels it) until it ends.
    if (mode === "stream") clearTimeout(timer);
    res.body.once("close", unlink);
    const response: HttpResponse = { status: res.statusCode, headers: res.headers, body: new ResponseBody(res.body, (err) => fail(err, "body")) };
    if ((opts.okStatus ?? is2xx)(res.statusCode)) return response;
    throw await this.errorFrom(response, target);
  }

  private dispatcher(foreign: boolean): Agent {
    if (!foreign) return (this.agent ??= new Agent(this.agentOptions));
    return (this.guarded ??= createGuardedAgent(this.ssrf, this.agentOptions));
  }

  private async errorFrom(res: HttpResponse, target: Target): Promise<HttpError> {
    let text = "";
    try {
      text = (await readBounded(res.body, this.maxErrorBodyBytes)).bytes.toString("utf8");
    } catch {
      // a broken error body: the status says enough
    }
    return statusError(this.name, target.href, { status: res.status, headers: res.headers, text }, this.errorBody, this.scrub);
  }

  private invalid(target: Target, what: string, kind: "too_large" | "invalid_response", cause?: unknown): HttpError {
    const url = this.scrub(target.href);
    return new HttpError(this.scrub(`${this.name} at ${url} ${what}`), { kind, retryable: false, url, cause });
  }

  /** What a failed exchange or body read becomes: the caller's abort reason, or an HttpError. */
  private failure(err: unknown, at: FailureContext): unknown {
    if (at.caller?.aborted) return at.caller.reason;
    if (err instanceof HttpError) return err;
    const url = this.scrub(at.target.href);
    const cause = err;
    if (at.timedOut)
      return new HttpError(`${this.name} at ${url}: no answer within ${at.deadline.ms} ms`, { kind: "timeout", retryable: true, url, cause });
    const ssrf = findSsrfError(err);
    if (ssrf) return ssrf;
    if (err instanceof Error && (err as NodeJS.ErrnoException).code === "UND_ERR_BODY_TIMEOUT")
      return new HttpError(`${this.name} stream stalled: no data for ${at.idleMs} ms`, { kind: "timeout", retryable: true, url, cause });
    const reason = this.scrub(err instanceof Error ? err.message : String(err));
    const message = at.phase === "connect" ? `cannot reach ${this.name} at ${url}: ${reason}` : `${this.name} stream dropped: ${reason}`;
    return new HttpError(message, { kind: "network", retryable: true, url, cause });
  }
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) out[key.toLowerCase()] = value;
  return out;
}

export function createHttpClient(opts: HttpClientOptions): HttpClient {
  return new HttpClient(opts);
}
