import { runInTrace, startSpan } from "@gw/bus";
import type { Logger, Metrics } from "@gw/runtime";
import type { FastifyInstance } from "fastify";

export const REQUEST_ID_HEADER = "x-request-id";

/**
 * Every HTTP request runs in a trace (the client's `traceparent` continued, or a new one) whose
 * id is the request id: it goes back as `x-request-id`, onto every log line written while the
 * request is handled, and over the bus to the services it calls. The request is counted in the
 * request metrics (surface "http", method "<verb> <route>", outcome the status code) when its
 * response ends or its connection closes, streams included, and logged when `accessLog` is on.
 */
export function registerRequestTracing(app: FastifyInstance, deps: { logger: Logger; metrics: Metrics; accessLog: boolean }): void {
  app.addHook("onRequest", (request, reply, done) => {
    const header = request.headers.traceparent;
    const trace = startSpan(typeof header === "string" ? header : undefined);
    void reply.header(REQUEST_ID_HEADER, trace.traceId);
    const route = `${request.method} ${request.routeOptions.url ?? "unmatched"}`;
    const metered = deps.metrics.meter.begin("http", route);
    const res = reply.raw;
    res.once("close", () => {
      // A response cut off before it ended (client gone, edge closing) counts as 499, nginx's
      // "client closed request": its status line may have said 200 long before.
      const status = res.writableFinished ? res.statusCode : 499;
      deps.metrics.meter.end(metered, String(status));
      if (!deps.accessLog) return;
      deps.logger.info(
        {
          reqId: trace.traceId,
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
