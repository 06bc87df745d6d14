import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

/**
 * The W3C trace context (https://www.w3.org/TR/trace-context/) a request carries across
 * services: the edge starts one per client request (or continues the client's `traceparent`),
 * the bus sends it in a `traceparent` header, and a service handling the request runs in it.
 * Its trace id makes the request id (`req_<trace id>`): every log line written while handling the
 * request carries it (`traceLogFields`), and HTTP clients get it back as `x-request-id`.
 */
export interface TraceContext {
  /** 32 lowercase hex digits, never all zero. */
  traceId: string;
  /** This hop's span: 16 lowercase hex digits, never all zero. */
  spanId: string;
  sampled: boolean;
}

export const TRACEPARENT_HEADER = "traceparent";

const storage = new AsyncLocalStorage<TraceContext>();
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * Random ids from randomUUID, which draws from a cached pool of random bytes: an id per request
 * costs a tenth of a randomBytes call. Its fixed version digits keep the ids from being all zero.
 */
function traceIdHex(): string {
  return randomUUID().replaceAll("-", "");
}

function spanIdHex(): string {
  const uuid = randomUUID();
  return uuid.slice(0, 8) + uuid.slice(14, 18) + uuid.slice(19, 23);
}

/** A `traceparent` value, or undefined when it is malformed (version ff, all-zero ids). */
export function parseTraceparent(value: string | undefined): TraceContext | undefined {
  const match = value === undefined ? null : TRACEPARENT.exec(value.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  if (version === "ff" || /^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

export function formatTraceparent(trace: TraceContext): string {
  return `00-${trace.traceId}-${trace.spanId}-${trace.sampled ? "01" : "00"}`;
}

/** A new span: in the trace of `parent` (a context or a received `traceparent`), else in a new trace. */
export function startSpan(parent?: TraceContext | string): TraceContext {
  const from = typeof parent === "string" ? parseTraceparent(parent) : parent;
  return { traceId: from?.traceId ?? traceIdHex(), spanId: spanIdHex(), sampled: from?.sampled ?? false };
}

/** Runs `fn` (and everything it starts) in `trace`. */
export function runInTrace<T>(trace: TraceContext, fn: () => T): T {
  return storage.run(trace, fn);
}

/** The trace the current code runs in, if any. */
export function currentTrace(): TraceContext | undefined {
  return storage.getStore();
}

/** The `traceparent` header for a request sent from the current trace: a child span of it. */
export function outgoingTraceparent(): string | undefined {
  const trace = storage.getStore();
  return trace === undefined ? undefined : formatTraceparent(startSpan(trace));
}

/** A trace's request id, as clients (`x-request-id`) and log lines (`reqId`) show it. */
export function requestIdOf(trace: TraceContext): string {
  return `req_${trace.traceId}`;
}

/** For a logger's mixin: the request id of the current trace on every line written inside it. */
export function traceLogFields(): { reqId?: string } {
  const trace = storage.getStore();
  return trace === undefined ? {} : { reqId: requestIdOf(trace) };
}
