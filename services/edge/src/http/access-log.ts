import type { IncomingMessage } from "node:http";
import { beginSpan, requestIdOf, runInTrace, startRequestTrace, startSpan, type TraceContext } from "@gw/bus";
import type { Logger, Metrics } from "@gw/runtime";
import type { FastifyInstance } from "fastify";
import { REQUEST_ID_HEADER } from "./errors.js";

const traces = new WeakMap<IncomingMessage, TraceContext>();

/**
 * Fastify's `genReqId`: each request's trace, started here (the client's `traceparent`
 * continued, or a new trace), names the request with an id the edge generates, unique per
 * request even when the client continues one trace over many (`startRequestTrace`), so a client
 * cannot make its request's log lines mix with others'.
 */
export function requestIdFor(raw: IncomingMessage): string {
  const header = raw.headers.traceparent;
  const trace = startRequestTrace(typeof header === "string" ? header : undefined);
  traces.set(raw, trace);
  return requestIdOf(trace);
}

/**
 * Every HTTP request runs in its trace: the request id goes back as `x-request-id`, onto every
 * log line written while the request is handled, and over the bus to the services it calls. The
 * request is counted in the request metrics (surface "http", method "<verb> <route>", outcome the
 * status code) when its response ends or its connection closes, streams included, logged
 * when `accessLog` is on, and recorded as the trace's server span when tracing is on.
 */
export function registerRequestTracing(app: FastifyInstance, deps: { logger: Logger; metrics: Metrics; accessLog: boolean }): void {
  // The access line's fields are fixed and none holds a credential, so it skips the path
  // redaction every other line pays (about 6 µs a line); configured secrets are still scrubbed.
  const accessLogger = deps.logger.child({}, { redact: [] });
  app.addHook("onRequest", (request, reply, done) => {
    const trace = traces.get(request.raw) ?? startSpan();
    void reply.header(REQUEST_ID_HEADER, request.id);
    const route = `${request.method} ${request.routeOptions.url ?? "unmatched"}`;
    const metered = deps.metrics.meter.begin("http", route);
    const span = beginSpan("edge", route, "server", trace)
      ?.set("http.request.method", request.method)
      .set("http.route", request.routeOptions.url)
      .set("url.path", request.url.split("?")[0])
      .set("gw.request.id", request.id);
    const res = reply.raw;
    res.once("close", () => {
      // A response cut off before it ended (client gone, edge closing) counts as 499, nginx's
      // "client closed request": its status line may have said 200 long before.
      const status = res.writableFinished ? res.statusCode : 499;
      deps.metrics.meter.end(metered, String(status));
      span?.set("http.response.status_code", status).end(status >= 500 ? String(status) : undefined);
      if (!deps.accessLog) return;
      accessLogger.info(
        {
          reqId: request.id,
          method: request.method,
          path: request.url.split("?")[0],
          route: request.routeOptions.url,
          status,
          ms: Math.round((performance.now() - metered.startedAt) * 10) / 10,
          clientIp: request.ip,
        },
        "http request",
      );
    });
    runInTrace(trace, done);
  });
}
