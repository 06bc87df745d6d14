import { type NatsServerHandle, startNats, waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats, NatsBus } from "./index.js";
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

  it("turns a flush cut short by the lost connection into UNAVAILABLE, not nats.js's text", async () => {
    const bus = new NatsBus(await connectNats({ url: server.url }));
    await server.kill("SIGKILL");
    await waitFor(() => (bus.isHealthy() ? undefined : true), { what: "bus to notice the outage" });
    // nats.js rejects the flush's ping at its next reconnect attempt ("connection disconnected").
    await expect(bus.flush()).rejects.toMatchObject({ code: "UNAVAILABLE", message: "the bus connection dropped; try again" });
    await server.start();
    await waitFor(() => (bus.isHealthy() ? true : undefined), { what: "bus to reconnect", timeoutMs: 15_000 });
    await bus.flush();
    await bus.close();
  });

  it("rejects start-up with a clear message when NATS is unreachable", async () => {
    await expect(connectNats({ url: "nats://127.0.0.1:1", connectTimeoutMs: 500 })).rejects.toThrow(
      /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1/,
    );
  });
});

describe("NATS bus requests", () => {
  it("matches many concurrent replies to their requests, and ignores a reply that comes too late", async () => {
    const caller = new NatsBus(await connectNats({ url: server.url, name: "caller" }));
    const callee = new NatsBus(await connectNats({ url: server.url, name: "callee" }));
    try {
      // Replies come back in a scrambled order: each request must still get its own.
      callee.handle("mux.echo", async (d) => {
        await new Promise((resolve) => setTimeout(resolve, (d[0]! * 7) % 13));
        return d;
      });
      let released: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        released = resolve;
      });
      callee.handle("mux.late", async (d) => {
        await held;
        return d;
      });
      await callee.flush();

      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          caller.request("mux.echo", new Uint8Array([i % 256, i >> 8]), { timeoutMs: 5_000 }),
        ),
      );
      expect(replies.map((r) => r[0]! + (r[1]! << 8))).toEqual(Array.from({ length: 200 }, (_, i) => i));

      await expect(caller.request("mux.late", new Uint8Array([1]), { timeoutMs: 100 })).rejects.toMatchObject({
        code: "TIMEOUT",
      });
      released();
      // The late reply arrives on an inbox nobody waits on; the next request is unaffected.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const next = await caller.request("mux.echo", new Uint8Array([9, 0]), { timeoutMs: 2_000 });
      expect([...next]).toEqual([9, 0]);
    } finally {
      await caller.close();
      await callee.close();
    }
  });
});

describe("NATS bus replies over max_payload", () => {
  it("answers PAYLOAD_TOO_LARGE at once instead of leaving the caller to its timeout", async () => {
    const handlerErrors: unknown[] = [];
    const bus = new NatsBus(await connectNats({ url: server.url, name: "big" }), (err) => handlerErrors.push(err));
    try {
      // The server's default max_payload is 1 MiB.
      bus.handle("big.reply", () => new Uint8Array(2 * 1024 * 1024));
      bus.handle("small.reply", () => new Uint8Array(1024));
      await bus.flush();
      // The code itself shows the refusal came back as the answer: a silence would be TIMEOUT.
      await expect(bus.request("big.reply", new Uint8Array(0), { timeoutMs: 20_000 })).rejects.toMatchObject({
        code: "PAYLOAD_TOO_LARGE",
        message: expect.stringContaining("big.reply"),
      });
      expect(handlerErrors).toHaveLength(1);
      expect((await bus.request("small.reply", new Uint8Array(0), { timeoutMs: 5_000 })).byteLength).toBe(1024);
    } finally {
      await bus.close();
    }
  });
});
