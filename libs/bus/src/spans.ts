import { currentTrace, setRootSampleRatio, type TraceContext } from "./trace-context.js";

/**
 * Span export over the trace context that already travels: a span here IS a `TraceContext` (its
 * trace id, its own span id, its parent's) plus a name, a kind, times and attributes, recorded
 * once it ends. While no sink is installed (tracing off, the default) `beginSpan` returns
 * undefined at once: no span object, no clock read, nothing exported.
 */
export type SpanKind = "server" | "client" | "internal" | "producer" | "consumer";

export type SpanAttributeValue = string | number | boolean;

/** One ended span, as a sink receives it. */
export interface EndedSpan {
  /** The service that recorded it (`edge`, `sessions`, `agent-runner`, ...): its service.name. */
  service: string;
  name: string;
  kind: SpanKind;
  trace: TraceContext;
  /** Milliseconds since the epoch, fractional. */
  startTime: number;
  endTime: number;
  attributes: Record<string, SpanAttributeValue>;
  /** Set when the span's operation failed: the error code or message (status ERROR). */
  error?: string;
}

/** Where ended spans go: the OTLP exporter (`@gw/host`), or a test's recorder. */
export interface SpanSink {
  record(span: EndedSpan): void;
}

const sinks: SpanSink[] = [];

/**
 * Installs a sink (tracing on) and samples new traces at `sampleRatio`; the returned function
 * removes it. Several gateways in one process (tests) each install theirs; every sink sees every
 * span recorded in the process.
 */
export function installSpanSink(sink: SpanSink, opts: { sampleRatio: number }): () => void {
  sinks.push(sink);
  setRootSampleRatio(opts.sampleRatio);
  return () => {
    const at = sinks.indexOf(sink);
    if (at >= 0) sinks.splice(at, 1);
    if (sinks.length === 0) setRootSampleRatio(0);
  };
}

export function tracingEnabled(): boolean {
  return sinks.length > 0;
}

const epochMs = () => performance.timeOrigin + performance.now();

/** A span being timed; `end` records it once (later calls do nothing). */
export class OpenSpan {
  readonly attributes: Record<string, SpanAttributeValue> = {};
  private ended = false;
  private readonly startTime = epochMs();

  constructor(
    private readonly service: string,
    private readonly name: string,
    private readonly kind: SpanKind,
    readonly trace: TraceContext,
  ) {}

  /** Sets an attribute (undefined: none); an ended span keeps the attributes it was recorded with. */
  set(key: string, value: SpanAttributeValue | undefined): this {
    if (value !== undefined && !this.ended) this.attributes[key] = value;
    return this;
  }

  /** Records the span; `error` marks it failed (an error code, or "ok"/undefined for success). */
  end(error?: string): void {
    if (this.ended) return;
    this.ended = true;
    const span: EndedSpan = {
      service: this.service,
      name: this.name,
      kind: this.kind,
      trace: this.trace,
      startTime: this.startTime,
      endTime: epochMs(),
      attributes: this.attributes,
      ...(error === undefined || error === "ok" ? {} : { error }),
    };
    for (const sink of sinks) sink.record(span);
  }
}

/**
 * Starts timing the span `trace` (default: the current one) when tracing is on and the trace is
 * sampled; undefined otherwise, so callers write `span?.end()`.
 */
export function beginSpan(service: string, name: string, kind: SpanKind, trace?: TraceContext): OpenSpan | undefined {
  if (sinks.length === 0) return undefined;
  const of = trace ?? currentTrace();
  return of?.sampled ? new OpenSpan(service, name, kind, of) : undefined;
}
