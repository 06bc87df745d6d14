import { AsyncLocalStorage } from "node:async_hooks";
import { randomFillSync } from "node:crypto";

/**
 * The W3C trace context (https://www.w3.org/TR/trace-context/) a request carries across
 * services: the edge starts one per client request (continuing an HTTP client's `traceparent`),
 * the bus sends it in a `traceparent` header, and a service handling the request runs in it.
 * It names the request: its request id is on every log line written while handling the request
 * (`traceLogFields`), and HTTP clients get it back as `x-request-id`.
 */
export interface TraceContext {
  /** 32 lowercase hex digits, never all zero. */
  traceId: string;
  /** This hop's span: 16 lowercase hex digits, never all zero. */
  spanId: string;
  /** The span this one continues (the sender's, or the client's `traceparent`); absent at a trace's root. */
  parentSpanId?: string;
  sampled: boolean;
  /**
   * The request id when it is not `req_<traceId>`: a request that continues a client's trace
   * gets one of the gateway's own (`startRequestTrace`). Child spans keep it, and the bus sends
   * it in a `gw-request-id` header beside `traceparent`.
   */
  requestId?: string;
}

export const TRACEPARENT_HEADER = "traceparent";
/** Beside `traceparent` on the bus, only when the request id is not the trace id's. */
export const REQUEST_ID_BUS_HEADER = "gw-request-id";

const storage = new AsyncLocalStorage<TraceContext>();
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const REQUEST_ID = /^req_[0-9a-f]{32}$/;

/**
 * Random ids drawn from a pool of random bytes refilled 8 KiB at a time: every request gets a
 * trace id and a span id, and a hex slice of the pool costs about a quarter of a randomUUID
 * (which formats and strips a UUID per call).
 */
const pool = Buffer.alloc(8192);
let poolOffset = pool.length;

/** `bytes` random bytes as lowercase hex, never all zero (W3C trace context forbids it). */
function randomHex(bytes: number): string {
  for (;;) {
    if (poolOffset + bytes > pool.length) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const start = poolOffset;
    poolOffset += bytes;
    for (let i = start; i < poolOffset; i++) if (pool[i] !== 0) return pool.toString("hex", start, poolOffset);
  }
}

const traceIdHex = () => randomHex(16);
const spanIdHex = () => randomHex(8);

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

/** The share of new traces marked sampled (recorded when span export is on); 0 while it is off. */
let rootSampleRatio = 0;

/** Set by span export (spans.ts): new traces are sampled with this probability. */
export function setRootSampleRatio(ratio: number): void {
  rootSampleRatio = ratio;
}

function sampleRoot(): boolean {
  return rootSampleRatio > 0 && (rootSampleRatio >= 1 || Math.random() < rootSampleRatio);
}

/**
 * A new span: a child of `parent` (a context or a received `traceparent`) in its trace, keeping
 * its sampled flag and request id; else the root of a new trace, sampled as span export's ratio says.
 */
export function startSpan(parent?: TraceContext | string): TraceContext {
  const from = typeof parent === "string" ? parseTraceparent(parent) : parent;
  if (from === undefined) return { traceId: traceIdHex(), spanId: spanIdHex(), sampled: sampleRoot() };
  const child: TraceContext = { traceId: from.traceId, spanId: spanIdHex(), parentSpanId: from.spanId, sampled: from.sampled };
  if (from.requestId !== undefined) child.requestId = from.requestId;
  return child;
}

/**
 * The trace of a client's request at the edge: the client's `traceparent` continued (its trace
 * id, its span as the parent, its sampled flag), else a new trace. The request id is the
 * gateway's either way: a new trace's id is random, and a continued trace gets a random id of
 * its own, since the client's trace id is the client's choice and spans many requests. So no
 * client can give its request the id of another's, and make its log lines pass for those.
 */
export function startRequestTrace(traceparent: string | undefined): TraceContext {
  const trace = startSpan(traceparent);
  if (trace.parentSpanId !== undefined) trace.requestId = `req_${traceIdHex()}`;
  return trace;
}

/** Runs `fn` (and everything it starts) in `trace`; undefined runs it outside any trace. */
export function runInTrace<T>(trace: TraceContext | undefined, fn: () => T): T {
  return storage.run(trace as TraceContext, fn);
}

/** The trace the current code runs in, if any. */
export function currentTrace(): TraceContext | undefined {
  return storage.getStore();
}

/**
 * The `traceparent` header for a request sent from the current trace: the current span as its
 * parent, so the receiver's span is a child of the span that sent it (an exported trace links).
 */
export function outgoingTraceparent(): string | undefined {
  const trace = storage.getStore();
  return trace === undefined ? undefined : formatTraceparent(trace);
}

/**
 * Sets the current trace's headers on a message leaving for another service: `traceparent`, and
 * the request id when it is not the trace id's.
 */
export function writeTraceHeaders(headers: { set(name: string, value: string): void }): void {
  const trace = storage.getStore();
  if (trace === undefined) return;
  headers.set(TRACEPARENT_HEADER, formatTraceparent(trace));
  if (trace.requestId !== undefined) headers.set(REQUEST_ID_BUS_HEADER, trace.requestId);
}

/** The trace a received message's headers carry (`writeTraceHeaders`), or undefined without a valid `traceparent`. */
export function readTraceHeaders(headers: { get(name: string): string | undefined } | undefined): TraceContext | undefined {
  const trace = parseTraceparent(headers?.get(TRACEPARENT_HEADER) || undefined);
  const requestId = trace === undefined ? undefined : headers?.get(REQUEST_ID_BUS_HEADER);
  if (trace !== undefined && requestId !== undefined && REQUEST_ID.test(requestId)) trace.requestId = requestId;
  return trace;
}

/** A trace's request id, as clients (`x-request-id`) and log lines (`reqId`) show it. */
export function requestIdOf(trace: TraceContext): string {
  return trace.requestId ?? `req_${trace.traceId}`;
}

/** The request id of the trace the current code runs in, if any. */
export function currentRequestId(): string | undefined {
  const trace = storage.getStore();
  return trace === undefined ? undefined : requestIdOf(trace);
}

/**
 * For a logger's mixin: the request id of the current trace on every line written inside it,
 * and the trace id too when the request id is not made of it (a continued client trace), so
 * lines still join the trace's spans.
 */
export function traceLogFields(): { reqId?: string; traceId?: string } {
  const trace = storage.getStore();
  if (trace === undefined) return {};
  return trace.requestId === undefined ? { reqId: `req_${trace.traceId}` } : { reqId: trace.requestId, traceId: trace.traceId };
}
