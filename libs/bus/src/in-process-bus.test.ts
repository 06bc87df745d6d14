import { describe, expect, it } from "vitest";
import { currentTrace, InProcessBus, runInTrace, startSpan } from "./index.js";
import { describeBusContract } from "./bus.contract.js";

describeBusContract("in-process", async () => {
  const handlerErrors: unknown[] = [];
  const bus = new InProcessBus((err) => handlerErrors.push(err));
  return { a: bus, b: bus, handlerErrors, cleanup: () => bus.close() };
});

describe("in-process deliveries", () => {
  const enc = (text: string) => new TextEncoder().encode(text);

  it("runs each subscriber in the trace its message was published from, in order, one batch or many", async () => {
    const bus = new InProcessBus();
    const seen: string[] = [];
    bus.subscribe("t.>", (data, subject) => {
      seen.push(`${subject} ${Buffer.from(data).toString()} ${currentTrace()?.traceId ?? "none"}`);
      if (subject === "t.first") bus.publish("t.again", enc("from-first"));
    });
    const one = startSpan();
    const two = startSpan();
    runInTrace(one, () => bus.publish("t.first", enc("1")));
    bus.publish("t.plain", enc("2"));
    runInTrace(two, () => bus.publish("t.second", enc("3")));
    await bus.flush();
    expect(seen).toEqual([`t.first 1 ${one.traceId}`, "t.plain 2 none", `t.second 3 ${two.traceId}`, `t.again from-first ${one.traceId}`]);
    await bus.close();
  });

  it("gives each subscriber a copy of its own", async () => {
    const bus = new InProcessBus();
    const got: Uint8Array[] = [];
    bus.subscribe("c", (data) => got.push(data));
    bus.subscribe("c", (data) => got.push(data));
    const sent = enc("abc");
    bus.publish("c", sent);
    sent[0] = 0x7a;
    await bus.flush();
    got[0]![1] = 0x7a;
    expect(got.map((d) => Buffer.from(d).toString())).toEqual(["azc", "abc"]);
    await bus.close();
  });

  it("keeps delivering after a subscriber throws", async () => {
    const errors: unknown[] = [];
    const bus = new InProcessBus((err) => errors.push(err));
    const seen: string[] = [];
    bus.subscribe("x", () => {
      throw new Error("boom");
    });
    bus.subscribe("x", (data) => seen.push(Buffer.from(data).toString()));
    bus.publish("x", enc("1"));
    bus.publish("x", enc("2"));
    await bus.flush();
    expect(seen).toEqual(["1", "2"]);
    expect(errors).toHaveLength(2);
    await bus.close();
  });
});
