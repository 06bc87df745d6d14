import { describe, expect, it } from "vitest";
import { type Pulled, pulledStream } from "./pulled-stream.js";
import { drain } from "./contract-helpers.js";

/** A stream over `batches` (one per pull), recording pulls and closes. */
function over(batches: Array<Pulled<number> | Error>) {
  const seen = { pulls: 0, closes: 0 };
  const stream = pulledStream<number>(
    () => {
      const batch = batches[seen.pulls++];
      if (batch === undefined) throw new Error("pulled past the end");
      return batch instanceof Error ? Promise.reject(batch) : Promise.resolve(batch);
    },
    () => void seen.closes++,
  );
  return { seen, stream };
}


describe("pulledStream", () => {
  it("hands out every item in order, pulling only when the queue is empty, empty batches included", async () => {
    const { seen, stream } = over([
      { items: [1, 2], done: false },
      { items: [], done: false },
      { items: [3], done: false },
      { items: [4, 5], done: true },
    ]);
    expect(await drain(stream)).toEqual({ got: [1, 2, 3, 4, 5] });
    expect(seen).toEqual({ pulls: 4, closes: 1 });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(seen).toEqual({ pulls: 4, closes: 1 });
  });

  it("hands out the items that came before a failure, then throws it", async () => {
    const boom = new Error("cut");
    const { seen, stream } = over([{ items: [1], done: false }, { items: [2, 3], done: false, error: boom }]);
    expect(await drain(stream)).toEqual({ got: [1, 2, 3], error: boom });
    expect(seen.closes).toBe(1);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("throws a failed pull and answers done after it", async () => {
    const boom = new Error("read failed");
    const { seen, stream } = over([{ items: [1], done: false }, boom]);
    expect(await drain(stream)).toEqual({ got: [1], error: boom });
    expect(seen.closes).toBe(1);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("closes once when the reader stops early, and pulls no more", async () => {
    const { seen, stream } = over([{ items: [1, 2], done: false }, { items: [3], done: true }]);
    for await (const n of stream) {
      expect(n).toBe(1);
      break;
    }
    expect(seen).toEqual({ pulls: 1, closes: 1 });
    await stream.return!();
    expect(seen.closes).toBe(1);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("answers next() calls made while a pull is under way in order", async () => {
    const { stream } = over([{ items: [1], done: false }, { items: [2], done: true }]);
    expect(await Promise.all([stream.next(), stream.next(), stream.next()])).toEqual([
      { done: false, value: 1 },
      { done: false, value: 2 },
      { done: true, value: undefined },
    ]);
  });
});
