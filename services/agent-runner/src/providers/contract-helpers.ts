import { expect } from "vitest";
import { runFailure } from "../run/run-errors.js";
import { type ModelChunk, ProviderError } from "./model-provider.js";

/**
 * A stream whose upstream sent `partial` and then an event that is not JSON: the text before it
 * arrives, then the stream fails as the provider (`<name> stream sent an event that is not JSON`,
 * retryable, MODEL_ERROR for the run), with the parse error as its cause.
 */
export async function expectNotJsonEventFailure(stream: AsyncIterable<ModelChunk>, name: string): Promise<void> {
  const chunks: ModelChunk[] = [];
  const bad = await (async () => {
    for await (const chunk of stream) chunks.push(chunk);
  })().catch((e: unknown) => e);
  const message = `${name} stream sent an event that is not JSON`;
  expect(chunks).toEqual([{ type: "text", text: "partial" }]);
  expect(bad).toBeInstanceOf(ProviderError);
  expect(bad).toMatchObject({ retryable: true, message });
  expect((bad as Error).cause).toBeInstanceOf(SyntaxError);
  expect(runFailure(bad, new AbortController().signal)).toEqual({ code: "MODEL_ERROR", message });
}

/** Reads a stream to its end: what it gave, and the error it ended with, if any. */
export async function drain<T>(stream: AsyncIterable<T>): Promise<{ got: T[]; error?: unknown }> {
  const got: T[] = [];
  try {
    for await (const item of stream) got.push(item);
    return { got };
  } catch (error) {
    return { got, error };
  }
}
