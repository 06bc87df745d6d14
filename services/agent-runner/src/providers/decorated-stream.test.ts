import { describe, expect, it } from "vitest";
import { decoratedStream, openStream, type StreamEnd } from "./decorated-stream.js";
import type { ModelChunk } from "./model-provider.js";

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

async function drain(stream: AsyncIterable<ModelChunk>): Promise<{ got: ModelChunk[]; error?: unknown }> {
  const got: ModelChunk[] = [];
  try {
    for await (const c of stream) got.push(c);
    return { got };
  } catch (error) {
    return { got, error };
  }
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
