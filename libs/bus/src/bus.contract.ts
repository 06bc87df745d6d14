import { AgentIdentity, AgentIdentityGetRequest, GatewayError } from "@gw/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bus, callRpc, createSubjects, currentRequestId, currentTrace, defineRpc, runInTrace, serveRpc, startRequestTrace } from "./index.js";

export interface BusPair {
  /** Two buses on one network (two processes in distributed mode; the same bus in process). */
  a: Bus;
  b: Bus;
  handlerErrors: unknown[];
  cleanup(): Promise<void>;
}

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
let seq = 0;
const fresh = (what: string) => `test.${what}.${process.pid}.${++seq}`;

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error("expected a rejection");
}

async function collect(n: number, subscribe: (push: (s: string) => void) => void): Promise<string[]> {
  const got: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`got ${got.length} of ${n} messages`)), 5_000);
    subscribe((s) => {
      got.push(s);
      if (got.length === n) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return got;
}

export function describeBusContract(name: string, setup: () => Promise<BusPair>): void {
  describe(`Bus contract: ${name}`, () => {
    let pair: BusPair;
    beforeAll(async () => {
      pair = await setup();
    });
    afterAll(async () => {
      await pair.cleanup();
    });

    it("answers a request from a handler on the other bus", async () => {
      const subject = fresh("echo");
      pair.b.handle(subject, (data, ctx) => enc(`${dec(data)} via ${ctx.subject}`));
      await pair.b.flush();
      const reply = await pair.a.request(subject, enc("hi"), { timeoutMs: 2_000 });
      expect(dec(reply)).toBe(`hi via ${subject}`);
    });

    it("runs the handler in the caller's trace, with the caller's request id", async () => {
      const subject = fresh("trace");
      pair.b.handle(subject, () => enc(`${currentTrace()?.traceId} ${currentRequestId()}`));
      await pair.b.flush();
      // A client's trace continued at the edge: its request id is not made of its trace id.
      const trace = startRequestTrace("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
      const reply = await runInTrace(trace, () => pair.a.request(subject, enc(""), { timeoutMs: 2_000 }));
      expect(dec(reply)).toBe(`${trace.traceId} ${trace.requestId}`);
    });

    it("gives the handler the caller's deadline", async () => {
      const subject = fresh("deadline");
      pair.b.handle(subject, (_data, ctx) => enc(String(ctx.deadline)));
      await pair.b.flush();
      const before = Date.now();
      const deadline = Number(dec(await pair.a.request(subject, enc(""), { timeoutMs: 3_000 })));
      expect(deadline).toBeGreaterThanOrEqual(before + 3_000);
      expect(deadline).toBeLessThanOrEqual(Date.now() + 3_000);
    });

    it("fails with UNAVAILABLE, not a timeout, when nobody handles the subject", async () => {
      const err = await rejection(pair.a.request(fresh("nobody"), enc("x"), { timeoutMs: 20_000 }));
      expect(err.code).toBe("UNAVAILABLE");
    });

    it("fails with TIMEOUT when the deadline passes", async () => {
      const subject = fresh("slow");
      pair.b.handle(subject, () => new Promise<Uint8Array>(() => {}));
      await pair.b.flush();
      const err = await rejection(pair.a.request(subject, enc("x"), { timeoutMs: 200 }));
      expect(err.code).toBe("TIMEOUT");
    });

    it("carries a handler's typed error to the caller", async () => {
      const subject = fresh("typed");
      pair.b.handle(subject, () => {
        throw new GatewayError("NOT_FOUND", "no such thing", { details: { key: "k" } });
      });
      await pair.b.flush();
      const err = await rejection(pair.a.request(subject, enc("x"), { timeoutMs: 2_000 }));
      expect(err.code).toBe("NOT_FOUND");
      expect(err.message).toBe("no such thing");
      expect(err.details).toEqual({ key: "k" });
    });

    it("turns an untyped handler failure into INTERNAL without leaking its message", async () => {
      const subject = fresh("crash");
      pair.b.handle(subject, async () => {
        throw new Error("secret stack detail");
      });
      await pair.b.flush();
      const err = await rejection(pair.a.request(subject, enc("x"), { timeoutMs: 2_000 }));
      expect(err.code).toBe("INTERNAL");
      expect(err.message).not.toContain("secret");
      expect(pair.handlerErrors.some((e) => (e as Error).message === "secret stack detail")).toBe(true);
    });

    it("shares a queue group's requests between replicas, each request answered once", async () => {
      const subject = fresh("queue");
      const seen = { a: 0, b: 0 };
      pair.a.handle(
        subject,
        () => {
          seen.a++;
          return enc("a");
        },
        { queue: "svc" },
      );
      pair.b.handle(
        subject,
        () => {
          seen.b++;
          return enc("b");
        },
        { queue: "svc" },
      );
      await Promise.all([pair.a.flush(), pair.b.flush()]);
      const replies = await Promise.all(
        Array.from({ length: 40 }, () => pair.a.request(subject, enc(""), { timeoutMs: 2_000 })),
      );
      expect(replies).toHaveLength(40);
      expect(seen.a + seen.b).toBe(40);
      expect(seen.a).toBeGreaterThan(0);
      expect(seen.b).toBeGreaterThan(0);
    });

    it("uses a handler that arrives after the subject was already asked for", async () => {
      const subject = fresh("late");
      const early = await rejection(pair.a.request(subject, enc(""), { timeoutMs: 20_000 }));
      expect(early.code).toBe("UNAVAILABLE");
      pair.b.handle(subject, () => enc("late ok"));
      await pair.b.flush();
      expect(dec(await pair.a.request(subject, enc(""), { timeoutMs: 2_000 }))).toBe("late ok");
    });

    it("stops answering after unsubscribe", async () => {
      const subject = fresh("unsub");
      const stop = pair.b.handle(subject, () => enc("ok"));
      await pair.b.flush();
      expect(dec(await pair.a.request(subject, enc(""), { timeoutMs: 2_000 }))).toBe("ok");
      stop();
      await pair.b.flush();
      const err = await rejection(pair.a.request(subject, enc(""), { timeoutMs: 20_000 }));
      expect(err.code).toBe("UNAVAILABLE");
    });

    it("broadcasts to every subscriber, in order, with wildcards", async () => {
      const base = fresh("bcast");
      const n = 100;
      const first = collect(n, (push) => pair.a.subscribe(`${base}.>`, (d) => push(dec(d))));
      const second = collect(n, (push) => pair.b.subscribe(`${base}.*`, (d) => push(dec(d))));
      await Promise.all([pair.a.flush(), pair.b.flush()]);
      for (let i = 0; i < n; i++) pair.a.publish(`${base}.x`, enc(String(i)));
      const expected = Array.from({ length: n }, (_, i) => String(i));
      expect(await first).toEqual(expected);
      expect(await second).toEqual(expected);
    });

    it("delivers each published message to one member of a queue group", async () => {
      const subject = fresh("work");
      let count = 0;
      const done = collect(20, (push) => {
        const onMsg = (d: Uint8Array) => {
          count++;
          push(dec(d));
        };
        pair.a.subscribe(subject, onMsg, { queue: "workers" });
        pair.b.subscribe(subject, onMsg, { queue: "workers" });
      });
      await Promise.all([pair.a.flush(), pair.b.flush()]);
      for (let i = 0; i < 20; i++) pair.b.publish(subject, enc(String(i)));
      expect((await done).sort()).toEqual(Array.from({ length: 20 }, (_, i) => String(i)).sort());
      await new Promise((r) => setTimeout(r, 100));
      expect(count).toBe(20);
    });

    it("carries typed protobuf RPCs", async () => {
      const subjects = createSubjects(`t${process.pid}x${++seq}`);
      const rpc = defineRpc({
        service: "runner",
        method: "agent.identity.get",
        request: AgentIdentityGetRequest,
        response: AgentIdentity,
      });
      serveRpc(pair.b, subjects, rpc, (req) => ({
        id: req.agentId || "main",
        name: "Main",
        avatar: "",
        description: "d",
      }));
      await pair.b.flush();
      const got = await callRpc(pair.a, subjects, rpc, { agentId: "ops" }, { timeoutMs: 2_000 });
      expect(got).toEqual({ id: "ops", name: "Main", avatar: "", description: "d" });
    });
  });
}
