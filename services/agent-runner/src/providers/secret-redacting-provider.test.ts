import { createSecretScrubber } from "@gw/runtime";
import { describe, expect, it } from "vitest";
import { type ModelChunk, type ModelProvider, ProviderError } from "./model-provider.js";
import { SecretRedactingProvider } from "./secret-redacting-provider.js";

const KEY = "sk-unit-secret-0c9a41";
const request = { model: "m", system: "", messages: [], tools: [] };

function failingAfter(text: string, error: Error): ModelProvider {
  return {
    async *stream(): AsyncGenerator<ModelChunk> {
      yield { type: "text", text };
      throw error;
    },
  };
}

async function drain(provider: ModelProvider): Promise<{ chunks: ModelChunk[]; error: unknown }> {
  const chunks: ModelChunk[] = [];
  try {
    for await (const chunk of provider.stream(request, new AbortController().signal)) chunks.push(chunk);
  } catch (error) {
    return { chunks, error };
  }
  throw new Error("the stream did not fail");
}

describe("SecretRedactingProvider", () => {
  const scrub = createSecretScrubber([KEY]);

  it("replaces configured secrets in a provider error and keeps everything else", async () => {
    const original = new ProviderError(`upstream answered HTTP 401: invalid key Bearer ${KEY}`, {
      status: 401,
      retryable: false,
      retryAfterMs: 5,
    });
    const { chunks, error } = await drain(new SecretRedactingProvider(failingAfter("hi", original), scrub));
    expect(chunks).toEqual([{ type: "text", text: "hi" }]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      message: "upstream answered HTTP 401: invalid key Bearer [REDACTED]",
      status: 401,
      retryable: false,
      retryAfterMs: 5,
      cause: original,
    });
  });

  it("passes other errors, and provider errors without a secret, through untouched", async () => {
    const plain = new ProviderError("upstream answered HTTP 500", { status: 500, retryable: true });
    expect((await drain(new SecretRedactingProvider(failingAfter("a", plain), scrub))).error).toBe(plain);
    const other = new Error(`not a provider error ${KEY}`);
    expect((await drain(new SecretRedactingProvider(failingAfter("a", other), scrub))).error).toBe(other);
  });
});
