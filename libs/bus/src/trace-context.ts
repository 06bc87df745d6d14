import { AsyncLocalStorage } from "node:async_hooks";
import { randomFillSync } from "node:crypto";

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
  /** The span this one continues (the sender's, or the client's `traceparent`); absent at a trace's root. */
  parentSpanId?: string;
  sampled: boolean;
}

export const TRACEPARENT_HEADER = "traceparent";

const storage = new AsyncLocalStorage<TraceContext>();
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

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
 * its sampled flag; else the root of a new trace, sampled as span export's ratio says.
 */
export function startSpan(parent?: TraceContext | string): TraceContext {
  const from = typeof parent === "string" ? parseTraceparent(parent) : parent;
  if (from === undefined) return { traceId: traceIdHex(), spanId: spanIdHex(), sampled: sampleRoot() };
  return { traceId: from.traceId, spanId: spanIdHex(), parentSpanId: from.spanId, sampled: from.sampled };
}

/** Runs `fn` (and everything it starts) in `trace`. */
export function runInTrace<T>(trace: TraceContext, fn: () => T): T {
  return storage.run(trace, fn);
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

/** A trace's request id, as clients (`x-request-id`) and log lines (`reqId`) show it. */
export function requestIdOf(trace: TraceContext): string {
  return `req_${trace.traceId}`;
}

/** For a logger's mixin: the request id of the current trace on every line written inside it. */
export function traceLogFields(): { reqId?: string } {
  const trace = storage.getStore();
  return trace === undefined ? {} : { reqId: requestIdOf(trace) };
}
