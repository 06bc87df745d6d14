import { createHook } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import { decoratedStream, openStream, type StreamEnd } from "./decorated-stream.js";
import type { ModelChunk } from "./model-provider.js";
import { drain } from "./contract-helpers.js";

const text = (t: string): ModelChunk => ({ type: "text", text: t });

/** An inner stream of `texts`, failing after them with `error` if given; it counts opens and closes. */
function source(texts: string[], error?: Error) {
  const seen = { opened: 0, closed: 0 };
  async function* stream(): AsyncGenerator<ModelChunk> {
    seen.opened++;
    try {
      for (const t of texts) yield text(t);
      if (error) throw error;
    } finally {
      seen.closed++;
    }
  }
  return { seen, stream };
}

function decorate(inner: () => AsyncIterable<ModelChunk>, extra: { raise?: (err: unknown) => unknown; slowEnd?: boolean } = {}) {
  const chunks: ModelChunk[] = [];
  const ends: StreamEnd[] = [];
  const settled = { end: false };
  const stream = decoratedStream({
    open: () => openStream(inner()),
    chunk: (c) => chunks.push(c),
    end: (how) => {
      ends.push(how);
      if (!extra.slowEnd) return;
      return new Promise<void>((resolve) =>
        setTimeout(() => {
          settled.end = true;
          resolve();
        }, 20),
      );
    },
    ...(extra.raise ? { raise: extra.raise } : {}),
  });
  return { stream, chunks, ends, settled };
}


describe("decoratedStream", () => {
  it("opens the inner stream on the first next(), hands every chunk on and ends once, as done", async () => {
    const { seen, stream: inner } = source(["a", "b", "c"]);
    const { stream, chunks, ends } = decorate(inner);
    expect(seen.opened).toBe(0);
    expect(await drain(stream)).toEqual({ got: [text("a"), text("b"), text("c")] });
    expect(chunks).toEqual([text("a"), text("b"), text("c")]);
    expect(ends).toEqual([{ kind: "done" }]);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(ends).toHaveLength(1);
  });

  it("ends a failure after the first chunk as failed (not opening), with the error raise makes of it", async () => {
    const boom = new Error("cut short");
    const { stream, ends } = decorate(source(["a"], boom).stream, { raise: (err) => new Error(`raised: ${(err as Error).message}`) });
    const { got, error } = await drain(stream);
    expect(got).toEqual([text("a")]);
    expect(error).toEqual(new Error("raised: cut short"));
    expect(ends).toEqual([{ kind: "failed", error: boom, opening: false }]);
  });

  it("ends a failure before any chunk as failed while opening", async () => {
    const boom = new Error("refused");
    const { stream, chunks, ends } = decorate(source([], boom).stream);
    expect(await drain(stream)).toEqual({ got: [], error: boom });
    expect(chunks).toEqual([]);
    expect(ends).toEqual([{ kind: "failed", error: boom, opening: true }]);
  });

  it("closes the inner stream and ends as stopped when the caller stops reading early", async () => {
    const { seen, stream: inner } = source(["a", "b", "c"]);
    const { stream, ends } = decorate(inner);
    for await (const c of stream) {
      expect(c).toEqual(text("a"));
      break;
    }
    expect(seen.closed).toBe(1);
    expect(ends).toEqual([{ kind: "stopped" }]);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("answers next() calls made before the last settled in order, one at a time", async () => {
    const { stream } = decorate(source(["a", "b"]).stream);
    const results = await Promise.all([stream.next(), stream.next(), stream.next(), stream.next()]);
    expect(results).toEqual([
      { done: false, value: text("a") },
      { done: false, value: text("b") },
      { done: true, value: undefined },
      { done: true, value: undefined },
    ]);
  });

  it("settles the last next() only once an asynchronous end has", async () => {
    const { stream, ends, settled } = decorate(source(["a"]).stream, { slowEnd: true });
    expect(await stream.next()).toEqual({ done: false, value: text("a") });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(settled.end).toBe(true);
    expect(ends).toEqual([{ kind: "done" }]);
  });
});

/** `depth` decorations stacked over `inner`, each recording its hooks under its own name. */
function stack(inner: () => AsyncIterable<ModelChunk>, depth: number, raise = false) {
  const log: string[] = [];
  let stream: () => AsyncIterable<ModelChunk> = inner;
  for (let level = 1; level <= depth; level++) {
    const below = stream;
    const name = `d${level}`;
    stream = () =>
      decoratedStream({
        open: () => openStream(below()),
        chunk: (c) => log.push(`${name} chunk ${c.type === "text" ? c.text : c.type}`),
        end: (how) => {
          log.push(`${name} ${how.kind}${how.kind === "failed" ? ` ${(how.error as Error).message} opening=${how.opening}` : ""}`);
        },
        ...(raise ? { raise: (err: unknown) => new Error(`${(err as Error).message}+${name}`) } : {}),
      });
  }
  return { log, stream: stream() };
}

describe("stacked decorated streams", () => {
  it("run every decoration's hooks on each chunk and at the end, innermost first", async () => {
    const { log, stream } = stack(source(["a", "b"]).stream, 3);
    expect(await drain(stream)).toEqual({ got: [text("a"), text("b")] });
    expect(log).toEqual([
      "d1 chunk a",
      "d2 chunk a",
      "d3 chunk a",
      "d1 chunk b",
      "d2 chunk b",
      "d3 chunk b",
      "d1 done",
      "d2 done",
      "d3 done",
    ]);
    expect(await stream[Symbol.asyncIterator]().next()).toEqual({ done: true, value: undefined });
  });

  it("hand a failure outward through each decoration's raise, each ending with what the one inside raised", async () => {
    const { log, stream } = stack(source(["a"], new Error("cut")).stream, 3, true);
    const { got, error } = await drain(stream);
    expect(got).toEqual([text("a")]);
    expect(error).toEqual(new Error("cut+d1+d2+d3"));
    expect(log.slice(3)).toEqual(["d1 failed cut opening=false", "d2 failed cut+d1 opening=false", "d3 failed cut+d1+d2 opening=false"]);
  });

  it("a failure before the first chunk is a failure while opening for every decoration", async () => {
    const { log, stream } = stack(source([], new Error("refused")).stream, 2, true);
    expect((await drain(stream)).error).toEqual(new Error("refused+d1+d2"));
    expect(log).toEqual(["d1 failed refused opening=true", "d2 failed refused+d1 opening=true"]);
  });

  it("stop every decoration and close the source when the caller stops early", async () => {
    const { seen, stream: inner } = source(["a", "b", "c"]);
    const { log, stream } = stack(inner, 3);
    const it = stream[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ done: false, value: text("a") });
    expect(await it.next()).toEqual({ done: false, value: text("b") });
    await it.return!();
    expect(seen.closed).toBe(1);
    expect(log.slice(-3)).toEqual(["d1 stopped", "d2 stopped", "d3 stopped"]);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it("answer concurrent next() calls in order across the stack", async () => {
    const { stream } = stack(source(["a", "b"]).stream, 3);
    const it = stream[Symbol.asyncIterator]();
    expect(await Promise.all([it.next(), it.next(), it.next()])).toEqual([
      { done: false, value: text("a") },
      { done: false, value: text("b") },
      { done: true, value: undefined },
    ]);
  });

  it("cost one promise per chunk for the decorations however many are stacked", async () => {
    const count = async (depth: number) => {
      const chunks = Array.from({ length: 200 }, (_, i) => `w${i}`);
      const { stream } = stack(source(chunks).stream, depth);
      let promises = 0;
      const hook = createHook({ init: (_id, type) => void (type === "PROMISE" && promises++) }).enable();
      try {
        await drain(stream);
      } finally {
        hook.disable();
      }
      return promises;
    };
    const one = await count(1);
    const five = await count(5);
    // Opening and ending cost a few per decoration; the 200 chunks cost nothing more per layer.
    expect(five - one).toBeLessThan(4 * 10);
  });
});
