import { isGatewayError, type RunRecord } from "@gw/contracts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LiveRun, RunRegistry, RunRegistryOptions } from "./run-registry.js";

/**
 * Short windows, so the Redis run can let real time pass; the heartbeat's is long enough that a
 * refresh checked 0.6 of it later is still there on a loaded machine (400 ms left 160 ms, which
 * a busy CI run overshot).
 */
export const TEST_REGISTRY_OPTIONS: RunRegistryOptions = { retentionMs: 600, liveTtlMs: 2_500, heartbeatTtlMs: 1_000 };

/**
 * Two registries on one FastStore (two edges, or an edge and a runner), and a way to let time
 * pass: a moved clock for memory, real waiting for Redis.
 */
export interface RegistryPair {
  a: RunRegistry;
  b: RunRegistry;
  elapse(ms: number): Promise<void>;
  dispose(): Promise<void>;
}

let counter = 0;
const uniqueRunId = (label: string) => `${label}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

function record(runId: string, sessionKey = `session-${runId}`): RunRecord {
  return { runId, sessionKey, agentId: "main", state: "queued", edgeId: "edge-1", createdAt: 1, updatedAt: 1 };
}

async function errorCode(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => "no error",
    (err: unknown) => (isGatewayError(err) ? err.code : err),
  );
}

export function describeRunRegistryContract(name: string, setup: () => Promise<RegistryPair>): void {
  describe(`RunRegistry contract: ${name}`, () => {
    let pair: RegistryPair;
    const { retentionMs, liveTtlMs, heartbeatTtlMs } = TEST_REGISTRY_OPTIONS;
    beforeEach(async () => {
      pair = await setup();
    });
    afterEach(async () => {
      await pair.dispose();
    });

    describe("runIds", () => {
      it("refuses a live runId with CONFLICT, from either instance", async () => {
        const runId = uniqueRunId("dup");
        await pair.a.create(record(runId));
        expect(await errorCode(pair.a.create(record(runId)))).toBe("CONFLICT");
        expect(await errorCode(pair.b.create(record(runId)))).toBe("CONFLICT");
        expect(await pair.b.get(runId)).toMatchObject({ runId, state: "queued" });
      });

      it("lets exactly one of many concurrent creates of one runId win", async () => {
        const runId = uniqueRunId("race");
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => errorCode((i % 2 ? pair.a : pair.b).create(record(runId)))),
        );
        expect(results.filter((r) => r === "no error")).toHaveLength(1);
        expect(results.filter((r) => r === "CONFLICT")).toHaveLength(9);
      });

      it("lets a live record lapse after liveTtlMs, so a lost run cannot pin it forever", async () => {
        const runId = uniqueRunId("lost");
        await pair.a.create(record(runId));
        await pair.elapse(liveTtlMs + 100);
        expect(await pair.b.get(runId)).toBeNull();
      });
    });

    describe("results", () => {
      it("keeps a finished run's outcome for the retention window, still refusing its runId", async () => {
        const runId = uniqueRunId("done");
        await pair.a.create(record(runId));
        const running = await pair.b.claim(runId, "runner-1");
        expect(running).toMatchObject({ state: "running", owner: "runner-1" });
        await pair.b.finish(running!, { payloads: [{ type: "text", text: "hello" }] });

        expect(await pair.a.get(runId)).toMatchObject({ state: "done", payloads: [{ type: "text", text: "hello" }] });
        expect(await errorCode(pair.a.create(record(runId)))).toBe("CONFLICT");
        await pair.elapse(retentionMs + 100);
        expect(await pair.a.get(runId)).toBeNull();
        await pair.a.create(record(runId));
      });

      it("lists the runs not yet final on every instance, and drops one once it finishes or lapses", async () => {
        const [queued, running, finished, lost] = ["q", "r", "f", "l"].map((label) => uniqueRunId(`live-${label}`)) as [string, string, string, string];
        for (const runId of [queued, running, finished, lost]) await pair.a.create(record(runId));
        await pair.b.claim(running, "runner-1");
        const claimed = await pair.b.claim(finished, "runner-1");
        await pair.b.finish(claimed!, { payloads: [] });
        const mine = (runs: LiveRun[]) => runs.map((r) => r.record.runId).filter((id) => [queued, running, finished, lost].includes(id));
        expect(mine(await pair.b.listLive(1_000)).sort()).toEqual([queued, running, lost].sort());
        const seen = await pair.a.listLive(1_000);
        expect(seen).toContainEqual({ record: expect.objectContaining({ runId: running, state: "running", owner: "runner-1" }), heartbeat: true });
        expect(seen).toContainEqual({ record: expect.objectContaining({ runId: queued, state: "queued" }), heartbeat: false });
        // A runner that stops heartbeating: its run is still listed, without a heartbeat.
        await pair.elapse(heartbeatTtlMs + 100);
        expect((await pair.b.listLive(1_000)).find((r) => r.record.runId === running)).toMatchObject({ heartbeat: false });
        await pair.elapse(liveTtlMs);
        expect(mine(await pair.a.listLive(1_000))).toEqual([]);
      });

      it("records a typed error as the error state", async () => {
        const runId = uniqueRunId("err");
        await pair.a.create(record(runId));
        const running = await pair.a.claim(runId, "runner-1");
        await pair.a.finish(running!, { error: { code: "MODEL_ERROR", message: "provider down" } });
        expect(await pair.b.get(runId)).toMatchObject({
          state: "error",
          error: { code: "MODEL_ERROR", message: "provider down" },
        });
      });

      it("claims only a queued run, once", async () => {
        const runId = uniqueRunId("claim");
        expect(await pair.a.claim(runId, "runner-1")).toBeNull();
        await pair.a.create(record(runId));
        expect(await pair.a.claim(runId, "runner-1")).not.toBeNull();
        expect(await pair.b.claim(runId, "runner-2")).toBeNull();
        expect(await pair.b.get(runId)).toMatchObject({ owner: "runner-1" });
      });
    });

    describe("dispatch nonces", () => {
      it("claims a dispatched request only against the registration with its nonce", async () => {
        const runId = uniqueRunId("nonce");
        await pair.a.create({ ...record(runId), nonce: "mine" });
        expect(await pair.b.claim(runId, "runner-1", "theirs")).toBeNull();
        expect(await pair.b.get(runId)).toMatchObject({ state: "queued" });
        expect(await pair.b.claim(runId, "runner-1", "mine")).toMatchObject({ state: "running", owner: "runner-1" });
      });

      it("waits for a registration that lands just after its dispatch", async () => {
        const runId = uniqueRunId("late");
        const claiming = pair.b.claim(runId, "runner-1", "late-nonce");
        await new Promise((resolve) => setTimeout(resolve, 30));
        await pair.a.create({ ...record(runId), nonce: "late-nonce" });
        expect(await claiming).toMatchObject({ state: "running", owner: "runner-1", nonce: "late-nonce" });
      });
    });

    describe("heartbeats", () => {
      it("shows a claimed run's heartbeat to others until its owner stops refreshing it", async () => {
        const runId = uniqueRunId("hb");
        await pair.a.create(record(runId));
        await pair.a.claim(runId, "runner-1");
        expect(await pair.b.heartbeatAlive(runId)).toBe(true);

        await pair.elapse(heartbeatTtlMs * 0.6);
        await pair.a.heartbeat(runId, "runner-1");
        await pair.elapse(heartbeatTtlMs * 0.6);
        expect(await pair.b.heartbeatAlive(runId), "refreshed in time").toBe(true);

        await pair.elapse(heartbeatTtlMs + 100);
        expect(await pair.b.heartbeatAlive(runId), "the owner died").toBe(false);
        expect(await pair.b.get(runId)).toMatchObject({ state: "running" });
      });

      it("drops the heartbeat when the run finishes", async () => {
        const runId = uniqueRunId("hbdone");
        await pair.a.create(record(runId));
        const running = await pair.a.claim(runId, "runner-1");
        await pair.a.finish(running!, { payloads: [] });
        expect(await pair.b.heartbeatAlive(runId)).toBe(false);
      });
    });

    describe("aborts", () => {
      it("shows an abort marker to every instance, for that run only", async () => {
        const runId = uniqueRunId("abort");
        const other = uniqueRunId("abort");
        await pair.a.create(record(runId));
        expect(await pair.b.abortRequested(runId)).toBe(false);
        await pair.a.requestAbort(runId);
        expect(await pair.b.abortRequested(runId)).toBe(true);
        expect(await pair.b.abortRequested(other)).toBe(false);
      });

      it("tells the claiming runner about an abort requested while the run was queued", async () => {
        const [aborted, kept] = [uniqueRunId("abort"), uniqueRunId("abort")];
        await pair.a.create(record(aborted));
        await pair.a.create(record(kept));
        await pair.a.requestAbort(aborted);
        const claimed = await pair.b.beginClaim(aborted, "runner-b");
        expect(claimed?.abortRequested).toBe(true);
        await claimed?.written;
        expect((await pair.a.get(aborted))?.state).toBe("running");
        expect((await pair.b.beginClaim(kept, "runner-b"))?.abortRequested).toBe(false);
      });
    });

    describe("inbox", () => {
      it("shows what one instance hands a run to another, oldest first, once each, for that run only", async () => {
        const [runId, other] = [uniqueRunId("inbox"), uniqueRunId("inbox")];
        const entry = (id: string, at: number) => ({ id, kind: "steer" as const, text: `text ${id}`, sender: "Ada", at });
        expect(await pair.b.inbox.read(runId)).toEqual([]);
        await pair.a.inbox.offer(runId, [entry("m2", 2), entry("m1", 1)]);
        await pair.a.inbox.offer(runId, [entry("m1", 1)]);
        await pair.a.inbox.offer(other, [entry("x", 1)]);
        expect((await pair.b.inbox.read(runId)).map((e) => e.id)).toEqual(["m1", "m2"]);
        expect(await pair.b.inbox.read(other)).toEqual([entry("x", 1)]);
      });
    });

    describe("session locks", () => {
      it("lets exactly one of racing runs take a session's lock", async () => {
        const session = uniqueRunId("session");
        const wins = await Promise.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 ? pair.a : pair.b).tryLockSession(session, `run-${i}`)),
        );
        expect(wins.filter(Boolean)).toHaveLength(1);
        expect(await pair.a.tryLockSession(uniqueRunId("session"), "run-x"), "other sessions are free").toBe(true);
      });

      it("is released by its holder only, then free for the next run", async () => {
        const session = uniqueRunId("session");
        expect(await pair.a.tryLockSession(session, "run-1")).toBe(true);
        await pair.b.unlockSession(session, "run-2");
        expect(await pair.b.tryLockSession(session, "run-2"), "a non-holder cannot release it").toBe(false);
        await pair.a.unlockSession(session, "run-1");
        expect(await pair.b.tryLockSession(session, "run-2")).toBe(true);
      });

      it("expires unless its holder refreshes it, and a non-holder's refresh does not take it", async () => {
        const session = uniqueRunId("session");
        const lockTtl = heartbeatTtlMs * 2;
        expect(await pair.a.tryLockSession(session, "run-1")).toBe(true);
        await pair.elapse(lockTtl * 0.6);
        await pair.a.refreshSessionLock(session, "run-1");
        await pair.b.refreshSessionLock(session, "run-2");
        await pair.elapse(lockTtl * 0.6);
        expect(await pair.b.tryLockSession(session, "run-2"), "refreshed by its holder").toBe(false);

        await pair.elapse(lockTtl + 100);
        expect(await pair.b.tryLockSession(session, "run-2"), "the holder died").toBe(true);
        await pair.a.refreshSessionLock(session, "run-1");
        await pair.a.unlockSession(session, "run-1");
        expect(await pair.a.tryLockSession(session, "run-3"), "the stale holder cannot take it back").toBe(false);
      });
    });
  });
}
