import { isGatewayError } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { ConnectionsPerIp, isSlowConsumer, tooManyInFlight } from "./limits.js";

describe("ConnectionsPerIp", () => {
  it("allows max sockets per address, refuses the next with RATE_LIMITED, and frees on release", () => {
    const perIp = new ConnectionsPerIp(2);
    perIp.acquire("10.0.0.1");
    perIp.acquire("10.0.0.1");
    perIp.acquire("10.0.0.2");
    const refused = (() => {
      try {
        perIp.acquire("10.0.0.1");
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(isGatewayError(refused) && refused.code).toBe("RATE_LIMITED");
    expect(isGatewayError(refused) && refused.details).toEqual({ limit: "maxConnectionsPerIp", max: 2 });
    perIp.release("10.0.0.1");
    expect(() => perIp.acquire("10.0.0.1")).not.toThrow();
  });

  it("forgets an address once its last socket is gone, so the map stays bounded", () => {
    const perIp = new ConnectionsPerIp(5);
    perIp.acquire("10.0.0.1");
    perIp.acquire("10.0.0.2");
    perIp.release("10.0.0.1");
    perIp.release("10.0.0.2");
    perIp.release("10.0.0.2");
    expect(perIp.size).toBe(0);
  });
});

describe("send-queue and in-flight limits", () => {
  const limits = { maxInFlight: 3, maxSendBufferBytes: 100 };

  it("calls a socket slow only once its queue is past the cap", () => {
    expect(isSlowConsumer({ bufferedAmount: 0 }, limits)).toBe(false);
    expect(isSlowConsumer({ bufferedAmount: 100 }, limits)).toBe(false);
    expect(isSlowConsumer({ bufferedAmount: 101 }, limits)).toBe(true);
  });

  it("names the limit in the in-flight refusal", () => {
    const err = tooManyInFlight(limits);
    expect(err.code).toBe("RATE_LIMITED");
    expect(err.message).toBe("too many requests in flight on this connection (max 3)");
    expect(err.details).toEqual({ limit: "maxInFlightPerConnection", max: 3 });
  });
});
