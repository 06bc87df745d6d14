import type { GatewayConfig } from "@gw/config";
import { GatewayError } from "@gw/contracts";
import type { Logger, Metrics } from "@gw/runtime";
import Fastify, { type FastifyInstance } from "fastify";
import type { OriginPolicy } from "../auth/origin-policy.js";
import { type Drain, registerHttpDrain } from "../drain.js";
import { registerRequestTracing, requestIdFor } from "./access-log.js";
import { registerOriginCheck } from "./browser-origin.js";
import { sendHttpError } from "./errors.js";
import { registerDepthLimitedJson } from "./json-body.js";

export interface HttpServerDeps {
  limits: GatewayConfig["gateway"]["limits"];
  logger: Logger;
  metrics: Metrics;
  accessLog: boolean;
  drain: Drain;
  origins: OriginPolicy;
}

/**
 * The edge's fastify instance with what holds for every request, whichever surface serves it:
 * the request id and access log, the drain, the one HTTP error mapper and its 404, the body
 * limit, the browser origin check and the JSON parser's depth limit. Registered on the root, so
 * every surface (an encapsulated plugin, http/surfaces.ts) inherits them.
 */
export function createHttpServer(deps: HttpServerDeps): FastifyInstance {
  const { limits, logger } = deps;
  const app = Fastify({
    bodyLimit: limits.maxBodyBytes,
    logger: false,
    genReqId: requestIdFor,
    // Slowloris: the whole request (headers and body) must arrive within httpRequestTimeoutMs;
    // Node checks on an interval, so keep it short enough for the limit to mean something.
    requestTimeout: limits.httpRequestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, limits.httpRequestTimeoutMs),
      connectionsCheckingInterval: Math.min(1_000, limits.httpRequestTimeoutMs),
    },
  });
  registerRequestTracing(app, { logger, metrics: deps.metrics, accessLog: deps.accessLog });
  registerHttpDrain(app, deps.drain);
  app.setErrorHandler((err, _request, reply) => sendHttpError(reply, err, logger));
  app.setNotFoundHandler((request, reply) =>
    sendHttpError(reply, new GatewayError("NOT_FOUND", `no route ${request.method} ${request.url}`), logger),
  );
  // Refuse a declared oversize body before routing, so unknown routes cannot be used to stream junk.
  app.addHook("onRequest", async (request) => {
    const declared = Number(request.headers["content-length"] ?? 0);
    if (declared > limits.maxBodyBytes) {
      throw new GatewayError("PAYLOAD_TOO_LARGE", `request body is larger than ${limits.maxBodyBytes} bytes`);
    }
  });
  registerOriginCheck(app, deps.origins);
  registerDepthLimitedJson(app);
  return app;
}
