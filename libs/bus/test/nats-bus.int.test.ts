import { type NatsServerHandle, startNats, waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats, NatsBus } from "../src/index.js";
import { describeBusContract } from "./bus.contract.js";

let server: NatsServerHandle;
beforeAll(async () => {
  server = await startNats({ jetstream: false });
});
afterAll(async () => {
  await server?.stop();
});

describeBusContract("NATS", async () => {
  const handlerErrors: unknown[] = [];
  const sink = (err: unknown) => handlerErrors.push(err);
  const a = new NatsBus(await connectNats({ url: server.url, name: "a" }), sink);
  const b = new NatsBus(await connectNats({ url: server.url, name: "b" }), sink);
  return {
    a,
    b,
    handlerErrors,
    cleanup: async () => {
      await a.close();
      await b.close();
    },
  };
});

describe("NATS bus health", () => {
  it("reports unhealthy and fails fast while the server is down, then recovers", async () => {
    const bus = new NatsBus(await connectNats({ url: server.url }));
    bus.handle("health.echo", (d) => d);
    await bus.flush();
    expect(bus.isHealthy()).toBe(true);

    await server.kill("SIGKILL");
    await waitFor(() => (bus.isHealthy() ? undefined : true), { what: "bus to notice the outage" });
    await expect(
      bus.request("health.echo", new Uint8Array([1]), { timeoutMs: 20_000 }),
    ).rejects.toMatchObject({
      code: "UNAVAILABLE",
    });

    await server.start();
    await waitFor(() => (bus.isHealthy() ? true : undefined), {
      what: "bus to reconnect",
      timeoutMs: 15_000,
    });
    const reply = await bus.request("health.echo", new Uint8Array([7]), { timeoutMs: 2_000 });
    expect([...reply]).toEqual([7]);
    await bus.close();
    expect(bus.isHealthy()).toBe(false);
  });

  it("rejects start-up with a clear message when NATS is unreachable", async () => {
    await expect(connectNats({ url: "nats://127.0.0.1:1", connectTimeoutMs: 500 })).rejects.toThrow(
      /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1/,
    );
  });
});
