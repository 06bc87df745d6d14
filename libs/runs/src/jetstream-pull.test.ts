import type { Msg, NatsConnection, Status } from "@nats-io/nats-core";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LongPull } from "./jetstream-pull.js";

/** Just enough of a NatsConnection: one subscription, recorded publishes, status events on demand. */
function fakeConnection() {
  let deliver: ((err: Error | null, msg: Msg) => void) | undefined;
  const pulls: Array<{ reply: string; batch: number }> = [];
  const statusWaiters: Array<(s: IteratorResult<Status>) => void> = [];
  let subscriptions = 0;
  const nc = {
    subscribe: (_subject: string, opts: { callback: (err: Error | null, msg: Msg) => void }) => {
      subscriptions++;
      deliver = opts.callback;
      return { unsubscribe: () => (deliver = undefined) };
    },
    publish: (_subject: string, data: string, opts: { reply: string }) => {
      pulls.push({ reply: opts.reply, batch: (JSON.parse(data) as { batch: number }).batch });
    },
    isClosed: () => false,
    status: () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<Status>>((resolve) => statusWaiters.push(resolve)),
        return: async () => ({ done: true as const, value: undefined }),
      }),
    }),
  } as unknown as NatsConnection;
  const msg = (subject: string, code = 0, description = ""): Msg =>
    ({ subject, data: new Uint8Array(), headers: code === 0 ? undefined : { code, description, get: () => "" } }) as unknown as Msg;
  return {
    nc,
    pulls,
    subscriptions: () => subscriptions,
    /** A run delivered (on the stream's subject, as JetStream does). */
    run: () => deliver?.(null, msg("gw.runs.queue")),
    status: (reply: string, code: number, description = "") => deliver?.(null, msg(reply, code, description)),
    reconnect: () => statusWaiters.shift()?.({ done: false, value: { type: "reconnect" } as Status }),
  };
}

describe("LongPull", () => {
  let free: number;
  let delivered: number;
  let lost: string[];
  let fake: ReturnType<typeof fakeConnection>;
  let pull: LongPull;

  beforeEach(() => {
    vi.useFakeTimers();
    free = 4;
    delivered = 0;
    lost = [];
    fake = fakeConnection();
    pull = new LongPull(fake.nc, {
      stream: "gw_runs",
      consumer: "runners",
      capacity: () => free,
      onMessage: () => {
        delivered++;
        free--;
      },
      onLost: (reason) => lost.push(reason),
      heartbeatMs: 1_000,
    });
  });
  afterEach(() => {
    pull.stop();
    vi.useRealTimers();
  });

  it("asks for its free capacity once, and again for each slot that frees, through one subscription", () => {
    pull.refill();
    expect(fake.pulls.map((p) => p.batch)).toEqual([4]);
    pull.refill(); // nothing freed: nothing more to ask for
    expect(fake.pulls).toHaveLength(1);
    for (let i = 0; i < 4; i++) fake.run();
    expect(delivered).toBe(4);
    free = 1;
    pull.refill();
    expect(fake.pulls.map((p) => p.batch)).toEqual([4, 1]);
    expect(fake.subscriptions()).toBe(1);
  });

  it("keeps at most two requests waiting however many slots free one by one", () => {
    pull.refill();
    for (let i = 0; i < 4; i++) fake.run();
    for (let i = 0; i < 4; i++) {
      free++;
      pull.refill();
    }
    expect(fake.pulls.map((p) => p.batch)).toEqual([4, 1, 1]);
  });

  it("asks again when a request expires, and only a heartbeat later after a 409", () => {
    pull.refill();
    fake.status(fake.pulls[0]!.reply, 408, "Request Timeout");
    expect(fake.pulls.map((p) => p.batch)).toEqual([4, 4]);
    fake.status(fake.pulls[1]!.reply, 409, "Exceeded MaxWaiting");
    expect(fake.pulls).toHaveLength(2);
    vi.advanceTimersByTime(1_000);
    expect(fake.pulls).toHaveLength(3);
  });

  it("gives up a request that falls silent for two heartbeats, and keeps one that heartbeats", () => {
    pull.refill();
    for (let t = 0; t < 5; t++) {
      vi.advanceTimersByTime(1_000);
      fake.status(fake.pulls[0]!.reply, 100, "Idle Heartbeat");
    }
    expect(fake.pulls).toHaveLength(1);
    vi.advanceTimersByTime(3_000);
    expect(fake.pulls).toHaveLength(2);
  });

  it("asks again after a reconnect, and reports a deleted consumer instead of pulling on", async () => {
    pull.refill();
    fake.reconnect();
    await vi.advanceTimersByTimeAsync(0);
    expect(fake.pulls).toHaveLength(2);
    fake.status(fake.pulls[1]!.reply, 409, "Consumer Deleted");
    expect(lost).toEqual(["409 consumer deleted"]);
    vi.advanceTimersByTime(5_000);
    // Nothing waits after the loss (the caller re-creates the consumer, then resets).
    const before = fake.pulls.length;
    pull.reset();
    expect(fake.pulls.length).toBe(before + 1);
  });
});
