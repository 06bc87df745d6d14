import { describe, expect, it } from "vitest";
import { readBounded } from "./bounded-read.js";

/** A body that yields `chunks` and records whether the reader stopped early. */
function body(chunks: string[]): AsyncIterable<Uint8Array> & { stoppedEarly: boolean; pulled: number } {
  const out = {
    stoppedEarly: false,
    pulled: 0,
    async *[Symbol.asyncIterator]() {
      try {
        for (const chunk of chunks) {
          out.pulled++;
          yield Buffer.from(chunk);
        }
      } finally {
        if (out.pulled < chunks.length) out.stoppedEarly = true;
      }
    },
  };
  return out;
}

describe("readBounded", () => {
  it("reads a body within the limit whole", async () => {
    expect(await readBounded(body(["ab", "cd"]), 4)).toEqual({ bytes: Buffer.from("abcd"), truncated: false });
    expect(await readBounded(body([]), 4)).toEqual({ bytes: Buffer.alloc(0), truncated: false });
  });

  it("keeps the first maxBytes of a longer body, marks it truncated and stops reading", async () => {
    const long = body(["abc", "def", "ghi", "never read"]);
    expect(await readBounded(long, 5)).toEqual({ bytes: Buffer.from("abcde"), truncated: true });
    expect(long.stoppedEarly).toBe(true);
    expect(long.pulled).toBe(2);
  });

  it("notices one byte too many after an exact fit", async () => {
    expect(await readBounded(body(["abcd", "e"]), 4)).toEqual({ bytes: Buffer.from("abcd"), truncated: true });
    expect(await readBounded(body(["ab", "c"]), 0)).toEqual({ bytes: Buffer.alloc(0), truncated: true });
  });

  it("passes a read error through", async () => {
    const failing: AsyncIterable<Uint8Array> = {
      async *[Symbol.asyncIterator]() {
        yield Buffer.from("a");
        throw new Error("reset");
      },
    };
    await expect(readBounded(failing, 10)).rejects.toThrow("reset");
  });
});
