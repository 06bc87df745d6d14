import { waitUntil } from "@gw/testing";
import { once } from "node:events";
import { createServer, type Socket, connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { coalesceWrites } from "./coalesced-writes.js";

/** A server that records each chunk as it arrives, and a client socket connected to it. */
async function pair(): Promise<{ client: Socket; chunks: string[]; close(): Promise<void> }> {
  const chunks: string[] = [];
  const server = createServer((s) => s.on("data", (d: Buffer) => chunks.push(d.toString())));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  const client = connect(port, "127.0.0.1");
  await once(client, "connect");
  return {
    client,
    chunks,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("coalesceWrites", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it("sends the writes of one turn, promise continuations included, as one chunk, in order", async () => {
    const p = await pair();
    close = p.close;
    coalesceWrites(p.client);
    coalesceWrites(p.client); // twice is once
    p.client.write("a");
    p.client.write(Buffer.from("b"));
    await Promise.resolve();
    p.client.write("c");
    // Held back in the socket until the turn ends (an uncorked socket hands each write to the
    // kernel at once, leaving nothing buffered).
    expect(p.client.writableLength).toBe(3);
    await new Promise((r) => process.nextTick(r));
    expect(p.client.writableLength).toBe(0);
    await waitUntil(() => p.chunks.join("") === "abc");
    expect(p.chunks).toEqual(["abc"]);
  });

  it("sends the next turn's writes when that turn ends, and completes every write's callback", async () => {
    const p = await pair();
    close = p.close;
    coalesceWrites(p.client);
    const written: string[] = [];
    p.client.write("1", () => written.push("1"));
    await waitUntil(() => p.chunks.join("") === "1");
    p.client.write("2", () => written.push("2"));
    p.client.write("3", () => written.push("3"));
    await waitUntil(() => p.chunks.join("") === "123");
    expect(p.chunks).toEqual(["1", "23"]);
    await waitUntil(() => written.length === 3);
    expect(written).toEqual(["1", "2", "3"]);
  });

  it("does not throw when the socket is destroyed with writes pending", async () => {
    const p = await pair();
    close = p.close;
    coalesceWrites(p.client);
    p.client.on("error", () => undefined);
    p.client.write("x");
    p.client.destroy();
    await new Promise((r) => setImmediate(r));
    expect(p.client.destroyed).toBe(true);
  });
});
