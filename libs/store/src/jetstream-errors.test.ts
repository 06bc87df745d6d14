import { GatewayError } from "@gw/contracts";
import { errors } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { jetStreamError } from "./jetstream-errors.js";

/** What nats.js throws (its class is not exported) when nobody answers a JetStream subject. */
function notEnabled(): Error {
  const err = new Error("jetstream is not enabled");
  err.name = "JetStreamNotEnabled";
  return err;
}

describe("jetStreamError", () => {
  it("calls NATS being away retryable: timeouts, and JetStream not answering yet after a restart", () => {
    const timeout = jetStreamError(new errors.TimeoutError(), "store append");
    expect(timeout.code).toBe("UNAVAILABLE");
    const starting = jetStreamError(notEnabled(), "store append");
    expect(starting.code).toBe("UNAVAILABLE");
    expect(starting.message).toBe("store append: jetstream is not enabled");
  });

  it("keeps anything else INTERNAL with its cause, and a GatewayError as it is", () => {
    const bug = new TypeError("x is undefined");
    const mapped = jetStreamError(bug, "store read");
    expect(mapped.code).toBe("INTERNAL");
    expect(mapped.cause).toBe(bug);
    const own = new GatewayError("NOT_FOUND", "no such session");
    expect(jetStreamError(own, "store read")).toBe(own);
  });
});
