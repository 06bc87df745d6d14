import { describeImage } from "@gw/contracts";
import type { ModelChunk, ModelProvider, ModelRequest } from "./model-provider.js";

/** Splits into about `parts` pieces on word boundaries, keeping the spaces so they concatenate back. */
export function chunkText(text: string, parts: number): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  if (words.length === 0) return [];
  const size = Math.max(1, Math.ceil(words.length / parts));
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += size) chunks.push(words.slice(i, i + size).join(""));
  return chunks;
}

/**
 * `builtin/echo`: streams the latest user message back in several chunks, so a fresh
 * gateway answers with no model configured and no network; a line per image that came with
 * it follows the text. Sampling parameters have nothing to act on in an echo, and it never
 * calls tools.
 */
export class BuiltinProvider implements ModelProvider {
  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    if (request.model !== "echo") throw new Error(`unknown builtin model: ${request.model}`);
    const lastUser = [...request.messages].reverse().find((m) => m.role === "user");
    const images = lastUser?.role === "user" ? (lastUser.images ?? []) : [];
    const text = [lastUser?.content ?? "", ...images.map(describeImage)].filter((line) => line !== "").join("\n");
    for (const chunk of chunkText(text, 4)) {
      // Yield to the event loop between chunks, as a network stream would.
      await new Promise((resolve) => setImmediate(resolve));
      signal.throwIfAborted();
      yield { type: "text", text: chunk };
    }
    yield { type: "usage", inputTokens: 0, outputTokens: 0 };
    yield { type: "stop", reason: "stop" };
  }
}
