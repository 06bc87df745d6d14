import { type EndedSpan, installSpanSink, type SpanKind, type SpanSink } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import type { Logger, Metrics } from "@gw/runtime";
import { ROOT_CONTEXT, SpanKind as OtelSpanKind, SpanStatusCode, TraceFlags, type Tracer, trace } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  type IdGenerator,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";

/** Spans waiting for export at most; beyond, new ones are dropped (a collector that is down costs bounded memory). */
const MAX_QUEUE = 4_096;
const BATCH = 512;
const EXPORT_EVERY_MS = 1_000;
const EXPORT_TIMEOUT_MS = 10_000;
/** A shutdown waits this long for the last spans, so a hanging collector cannot hold it up. */
const FINAL_FLUSH_MS = 2_000;

const KINDS: Record<SpanKind, OtelSpanKind> = {
  server: OtelSpanKind.SERVER,
  client: OtelSpanKind.CLIENT,
  internal: OtelSpanKind.INTERNAL,
  producer: OtelSpanKind.PRODUCER,
  consumer: OtelSpanKind.CONSUMER,
};

/**
 * Hands the SDK the ids the span already has: the gateway's trace context made them (and sent
 * them in `traceparent`), so the exported span is the one the logs' request id names. Set just
 * before each synchronous `startSpan`.
 */
class GivenIds implements IdGenerator {
  traceId = "";
  spanId = "";
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    return this.spanId;
  }
}

/** Spans handed to the batch processor and not yet through an export, and the spans lost. */
class ExportBacklog {
  pending = 0;
  constructor(readonly dropped: (count: number) => void) {}
}

/**
 * Counts the spans an export lost (collector down, refused, timed out) and warns once per
 * outage, so a missing collector neither floods the log nor goes unnoticed.
 */
class WatchedExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly endpoint: string,
    private readonly logger: Logger,
    private readonly backlog: ExportBacklog,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      this.backlog.pending -= spans.length;
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.failing) this.logger.info({ endpoint: this.endpoint }, "trace export recovered");
        this.failing = false;
      } else {
        this.backlog.dropped(spans.length);
        if (!this.failing) this.logger.warn({ endpoint: this.endpoint, err: result.error }, "trace export failed; spans are dropped until the collector answers");
        this.failing = true;
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** The OTLP sink: one tracer per service (its own service.name), one batch queue and exporter for all. */
class OtlpSpanSink implements SpanSink {
  private readonly ids = new GivenIds();
  private readonly tracers = new Map<string, Tracer>();

  constructor(
    private readonly processor: BatchSpanProcessor,
    private readonly backlog: ExportBacklog,
    private readonly serviceNamePrefix: string,
    private readonly version: string,
  ) {}

  private tracerFor(service: string): Tracer {
    let tracer = this.tracers.get(service);
    if (tracer === undefined) {
      const provider = new BasicTracerProvider({
        resource: resourceFromAttributes({
          [ATTR_SERVICE_NAME]: `${this.serviceNamePrefix}${service}`,
          [ATTR_SERVICE_VERSION]: this.version,
        }),
        idGenerator: this.ids,
        // Sampling happened where the trace began (its `sampled` flag); only sampled spans come here.
        sampler: new AlwaysOnSampler(),
        spanProcessors: [this.processor],
      });
      tracer = provider.getTracer("@gw/host");
      this.tracers.set(service, tracer);
    }
    return tracer;
  }

  record(span: EndedSpan): void {
    // A full queue (the collector slow or down) loses the span here, counted, before any SDK object is made.
    if (this.backlog.pending >= MAX_QUEUE) {
      this.backlog.dropped(1);
      return;
    }
    this.backlog.pending++;
    try {
      this.start(span);
    } catch {
      // Never the request's failure: the span is lost, and counted.
      this.backlog.pending--;
      this.backlog.dropped(1);
    }
  }

  private start(span: EndedSpan): void {
    const { traceId, spanId, parentSpanId } = span.trace;
    const parent =
      parentSpanId === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    const tracer = this.tracerFor(span.service);
    this.ids.traceId = traceId;
    this.ids.spanId = spanId;
    const otel = tracer.startSpan(span.name, { kind: KINDS[span.kind], startTime: span.startTime, attributes: span.attributes }, parent);
    if (span.error !== undefined) otel.setStatus({ code: SpanStatusCode.ERROR, message: span.error });
    otel.end(span.endTime);
  }
}

/**
 * Starts span export to `tracing`'s collector: spans leave in batches from a bounded queue, so
 * a slow or absent collector never holds up or fails a request. Returns the function that
 * flushes what is queued and stops (the shutdown's). Loaded only when `ops.tracing` is set
 * (tracing.ts), so a process that exports nothing never loads the OpenTelemetry SDK.
 */
export function startOtlpExport(
  deps: { logger: Logger; metrics: Metrics; version: string },
  tracing: NonNullable<GatewayConfig["ops"]["tracing"]>,
): () => Promise<void> {
  const dropped = deps.metrics.tally({
    name: "gw_trace_spans_dropped_total",
    help: "Spans the OTLP trace export lost (collector down, refused or too slow).",
  });
  const backlog = new ExportBacklog((count) => dropped.add(count));
  const exporter = new WatchedExporter(
    new OTLPTraceExporter({ url: tracing.otlpEndpoint, timeoutMillis: EXPORT_TIMEOUT_MS }),
    tracing.otlpEndpoint,
    deps.logger,
    backlog,
  );
  const processor = new BatchSpanProcessor(exporter, {
    maxQueueSize: MAX_QUEUE,
    maxExportBatchSize: BATCH,
    scheduledDelayMillis: EXPORT_EVERY_MS,
    exportTimeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const uninstall = installSpanSink(new OtlpSpanSink(processor, backlog, tracing.serviceNamePrefix, deps.version), {
    sampleRatio: tracing.sampleRatio,
  });
  deps.logger.info({ endpoint: tracing.otlpEndpoint, sampleRatio: tracing.sampleRatio }, "exporting traces");
  return async () => {
    uninstall();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), FINAL_FLUSH_MS);
    });
    const flushed = await Promise.race([processor.shutdown().catch((err: unknown) => err), late]);
    clearTimeout(timer);
    if (flushed !== undefined) deps.logger.warn({ err: flushed === "late" ? undefined : flushed, pending: backlog.pending }, "cannot flush the last spans");
  };
}
