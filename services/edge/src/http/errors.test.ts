import { GatewayError } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { describe, expect, it } from "vitest";
import { httpErrorResponse } from "./errors.js";

function capturingLogger() {
  const lines: string[] = [];
  const logger = createLogger({ service: "test", level: "info", destination: { write: (line: string) => lines.push(line) } });
  return { logger, lines };
}

describe("httpErrorResponse", () => {
  it("answers a client error with its catalogue status and SPEC §7 type, its own message and the parameter", () => {
    const { logger, lines } = capturingLogger();
    expect(httpErrorResponse(new GatewayError("INVALID_REQUEST", "body.model: model is required"), logger)).toEqual({
      status: 400,
      headers: {},
      body: { error: { message: "body.model: model is required", type: "invalid_request_error" } },
    });
    const named = new GatewayError("INVALID_REQUEST", "body.n: only n = 1", { details: { param: "n" } });
    expect(httpErrorResponse(named, logger, "req_1")).toEqual({
      status: 400,
      headers: { "x-request-id": "req_1" },
      body: { error: { message: "body.n: only n = 1", type: "invalid_request_error", param: "n" } },
    });
    expect(lines).toEqual([]);
  });

  it("answers a server-side failure with the catalogue's generic message and the request id, the details in the log", () => {
    const { logger, lines } = capturingLogger();
    const upstream = new GatewayError("MODEL_ERROR", "openai: POST http://admin@10.0.0.7:8000/v1/chat/completions: HTTP 500");
    expect(httpErrorResponse(upstream, logger, "req_abc")).toEqual({
      status: 502,
      headers: { "x-request-id": "req_abc" },
      body: { error: { message: "the model provider failed (request id req_abc)", type: "api_error" } },
    });
    expect(httpErrorResponse(new GatewayError("UNAVAILABLE", "no responder on gw.rpc.sessions.history"), logger)).toMatchObject({
      status: 503,
      body: { error: { message: "service unavailable", type: "api_error" } },
    });
    const logged = lines.join("");
    expect(logged).toContain("10.0.0.7:8000");
    expect(logged).toContain("req_abc");
    expect(logged).toContain("gw.rpc.sessions.history");
  });

  it("adds Retry-After to a rate-limited answer that knows when to retry", () => {
    const { logger } = capturingLogger();
    const limited = new GatewayError("RATE_LIMITED", "slow down", { details: { retryAfterSeconds: 42 } });
    expect(httpErrorResponse(limited, logger)).toEqual({
      status: 429,
      headers: { "retry-after": "42" },
      body: { error: { message: "slow down", type: "rate_limited" } },
    });
  });

  it("maps fastify's client errors: an oversize body is 413, other 4xx are invalid requests", () => {
    const { logger } = capturingLogger();
    const tooLarge = Object.assign(new Error("big"), { code: "FST_ERR_CTP_BODY_TOO_LARGE", statusCode: 413 });
    expect(httpErrorResponse(tooLarge, logger)).toMatchObject({ status: 413, body: { error: { type: "invalid_request_error" } } });
    const badJson = Object.assign(new Error("Unexpected token } in JSON"), { statusCode: 400 });
    expect(httpErrorResponse(badJson, logger)).toMatchObject({
      status: 400,
      body: { error: { message: "Unexpected token } in JSON", type: "invalid_request_error" } },
    });
  });

  it("never leaks an unexpected error: a bare 500 for the client, the cause in the log", () => {
    const { logger, lines } = capturingLogger();
    const res = httpErrorResponse(new Error("connect ECONNREFUSED 10.1.2.3:4222"), logger);
    expect(res).toEqual({ status: 500, headers: {}, body: { error: { message: "internal error", type: "api_error" } } });
    expect(lines.join("")).toContain("ECONNREFUSED 10.1.2.3:4222");
  });
});
