import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BuiltinProvider, chunkText } from "./builtin-provider.js";
import type { ModelChunk, ModelRequest } from "./model-provider.js";

const request = (messages: ModelRequest["messages"], model = "echo"): ModelRequest => ({
  model,
  system: "",
  messages,
  tools: [],
});

async function collect(stream: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const chunks: ModelChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe("chunkText", () => {
  it("splits into pieces that concatenate back to the input, whatever the input", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.integer({ min: 1, max: 10 }), (text, parts) => {
        expect(chunkText(text, parts).join("")).toBe(text);
      }),
    );
  });

  it("splits on word boundaries into about the requested number of pieces", () => {
    expect(chunkText("one two three four five six seven eight", 4)).toEqual(["one two ", "three four ", "five six ", "seven eight"]);
    expect(chunkText("", 4)).toEqual([]);
  });
});

describe("BuiltinProvider (builtin/echo)", () => {
  it("streams the latest user message back in several chunks that concatenate to it, then usage", async () => {
    const message = "the quick brown fox jumps over the lazy dog";
    const chunks = await collect(
      new BuiltinProvider().stream(
        request([
          { role: "user", content: "earlier" },
          { role: "assistant", content: "reply" },
          { role: "user", content: message },
        ]),
        new AbortController().signal,
      ),
    );
    const texts = chunks.filter((c) => c.type === "text").map((c) => c.text);
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join("")).toBe(message);
    expect(chunks.slice(-2)).toEqual([
      { type: "usage", inputTokens: 0, outputTokens: 0 },
      { type: "stop", reason: "stop" },
    ]);
  });

  it("refuses models other than echo", async () => {
    await expect(collect(new BuiltinProvider().stream(request([], "parrot"), new AbortController().signal))).rejects.toThrow(
      /unknown builtin model: parrot/,
    );
  });

  it("stops when aborted", async () => {
    const controller = new AbortController();
    const reason = new Error("stop");
    controller.abort(reason);
    await expect(
      collect(new BuiltinProvider().stream(request([{ role: "user", content: "a b c d" }]), controller.signal)),
    ).rejects.toBe(reason);
  });
});
