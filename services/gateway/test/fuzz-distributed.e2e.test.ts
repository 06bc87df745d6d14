import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fuzzFrame, fuzzHttp } from "../../edge/test/fuzz-frames.js";
import { expectSaneHttpAnswer, fuzzSocket, sendFuzzHttp } from "./fixtures/fuzz-socket.js";
import { type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { type StoreWatch, watchStores } from "./fixtures/store-writes.js";

// Few runs: each starts a socket through edge, NATS and services. `npm run fuzz -- --mode
// distributed --seconds N` throws the same generators for longer.
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

describe("protocol fuzzing against a distributed gateway (fast-check)", () => {
  let gw: GatewayUnderTest;
  let watch: StoreWatch;
  let nextId = 1;
  // Refused credentials: each may add one failed-auth count, the only write hostile input may cause.
  let unauthorized = 0;

  beforeAll(async () => {
    // A huge failed-auth budget: fuzzed connect frames must not get loopback blocked mid-run.
    gw = await startGateway("distributed", { gateway: { limits: { failedAuthMax: 1_000_000 } } });
    watch = await watchStores(gw);
  });
  afterAll(async () => {
    await watch?.close();
    await gw?.stop();
  });

  it("answers every frame once and every usable id once, over WebSocket", async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(fuzzFrame, { minLength: 1, maxLength: 8 }), async (connected, frames) => {
        const firstId = nextId;
        nextId += frames.length;
        const outcome = await fuzzSocket(gw.wsUrl(), frames, { firstId, token: connected ? TOKEN : undefined });
        unauthorized += outcome.unauthorized;
        expect(outcome.problems).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it("answers hostile HTTP requests with a JSON body and never a 500", async () => {
    await fc.assert(
      fc.asyncProperty(fuzzHttp, async (req) => {
        const res = await sendFuzzHttp(gw.httpUrl(), req, TOKEN);
        if (res.status === 401) unauthorized++;
        expectSaneHttpAnswer(req, res);
      }),
      { numRuns: RUNS },
    );
  });

  it("keeps every process alive and healthy", async () => {
    const procs = [...gw.edges.map((e) => e.proc), ...(gw.runners ?? []), ...(gw.sessions ?? [])];
    expect(procs.length).toBe(3);
    for (const proc of procs) expect({ name: proc.name, exit: proc.child.exitCode, signal: proc.child.signalCode }).toEqual({ name: proc.name, exit: null, signal: null });
    expect((await fetch(`${gw.httpUrl()}/health`)).status).toBe(200);
    expect(gw.logs()).not.toMatch(/unexpected error|internal error/);
  });

  it("writes nothing to Redis or JetStream but one failed-auth count per refused credential", async () => {
    const writes = await watch.writes();
    expect(writes.unexpected).toEqual([]);
    expect(writes.failedAuthHits).toBe(unauthorized);
  });
});
