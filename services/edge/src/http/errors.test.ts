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
  it("answers a typed error with its catalogue status and SPEC §7 type, and its own message", () => {
    const { logger, lines } = capturingLogger();
    expect(httpErrorResponse(new GatewayError("INVALID_REQUEST", "body.model: model is required"), logger)).toEqual({
      status: 400,
      headers: {},
      body: { error: { message: "body.model: model is required", type: "invalid_request_error" } },
    });
    expect(httpErrorResponse(new GatewayError("UNAVAILABLE"), logger)).toMatchObject({
      status: 503,
      body: { error: { message: "service unavailable", type: "api_error" } },
    });
    expect(lines).toEqual([]);
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
