import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { expectSaneHttpAnswer, sendFuzzHttp } from "../../gateway/test/fixtures/fuzz-socket.js";
import { FUZZ_TOKEN, type FuzzEdge, startFuzzEdge } from "./fuzz-edge.js";
import { fuzzFrame, fuzzHttp, materialize } from "./fuzz-frames.js";

// Bounded so `npm test` stays quick; `npm run fuzz -- --seconds N` runs the same generators longer.
const RUNS = Number(process.env.FUZZ_RUNS ?? 120);

interface Answer {
  id?: unknown;
  ok?: boolean;
  error?: { code: string };
}

class FuzzClient {
  readonly answers: Answer[] = [];
  closed: number | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => this.answers.push(JSON.parse(String(data)) as Answer));
    socket.on("close", (code) => {
      this.closed = code;
    });
  }

  static open(url: string): Promise<FuzzClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once("open", () => resolve(new FuzzClient(socket)));
      socket.once("error", reject);
    });
  }

  /** Waits until `count` answers are in (bounded), then a little longer to catch duplicates. */
  async settle(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.answers.length < count && this.closed === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 30));
  }
}

let nextId = 1;

describe("protocol fuzzing (fast-check)", () => {
  let edge: FuzzEdge;
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
  let unauthorized = 0;

  beforeAll(async () => {
    // A huge failed-auth budget: fuzzed connect frames must not get loopback blocked mid-run.
    edge = await startFuzzEdge({ failedAuthMax: 1_000_000 });
  });
  afterAll(async () => {
    await edge?.close();
  });

  it("answers every frame exactly once, every usable id once, and never closes or fails", async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(fuzzFrame, { minLength: 1, maxLength: 10 }), async (connected, frames) => {
        const client = await FuzzClient.open(edge.url);
        try {
          if (connected) {
            const params = { role: "control", auth: { token: FUZZ_TOKEN } };
            client.socket.send(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "connect", params }));
            await client.settle(1);
            client.answers.length = 0;
          }
          const expected: number[] = [];
          for (const frame of frames) {
            const id = nextId++;
            const { data, expectsId } = materialize(frame, id);
            if (expectsId) expected.push(id);
            client.socket.send(data);
          }
          await client.settle(frames.length);
          expect(client.closed).toBeUndefined();
          expect(client.answers).toHaveLength(frames.length);
          for (const id of expected) expect(client.answers.filter((a) => a.id === id)).toHaveLength(1);
          for (const answer of client.answers) {
            expect(answer.error?.code).not.toBe("INTERNAL");
            if (answer.error?.code === "UNAUTHORIZED") unauthorized++;
          }
        } finally {
          client.socket.terminate();
        }
      }),
      { numRuns: RUNS },
    );
    expect(edge.logs.filter((line) => /unexpected error|internal error/.test(line))).toEqual([]);
  });

  it("lets no key reach Object.prototype", () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    expect((({}) as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("writes nothing to the store except failed-auth counts", () => {
    expect(edge.writes.filter((w) => w !== "counters.hit" && w !== "counters.giveBack")).toEqual([]);
    // A secret checked while its IP has failures first takes a slot (a hit) and gives it back
    // when done (a giveBack); every other hit is one failure.
    const count = (write: string) => edge.writes.filter((w) => w === write).length;
    expect(count("counters.giveBack")).toBeLessThanOrEqual(count("counters.hit"));
    expect(count("counters.hit") - count("counters.giveBack")).toBeLessThanOrEqual(unauthorized);
  });

  it("answers hostile HTTP requests with a JSON body and never a 500", async () => {
    await fc.assert(
      fc.asyncProperty(fuzzHttp, async (req) => {
        expectSaneHttpAnswer(req, await sendFuzzHttp(edge.httpUrl, req, FUZZ_TOKEN));
      }),
      { numRuns: RUNS },
    );
  });

  it("answers a flood before connect one by one and still accepts connect", async () => {
    const client = await FuzzClient.open(edge.url);
    try {
      for (let i = 0; i < 2_000; i++) {
        client.socket.send(JSON.stringify({ jsonrpc: "2.0", id: 10_000 + i, method: "agents.list" }));
      }
      await client.settle(2_000);
      expect(client.answers).toHaveLength(2_000);
      // Past maxInFlightPerConnection the refusal is RATE_LIMITED instead; either is one answer.
      for (const a of client.answers) expect(["NOT_CONNECTED", "RATE_LIMITED"]).toContain(a.error?.code);
      expect(new Set(client.answers.map((a) => a.id)).size).toBe(2_000);
      client.socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "connect", params: { role: "node" } }));
      await client.settle(2_001);
      expect(client.answers.at(-1)).toMatchObject({ id: 1, ok: true });
    } finally {
      client.socket.terminate();
    }
  });
});
