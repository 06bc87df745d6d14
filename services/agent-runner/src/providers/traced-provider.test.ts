import { type EndedSpan, installSpanSink, runInTrace, startSpan } from "@gw/bus";
import { afterEach, describe, expect, it } from "vitest";
import type { ModelChunk, ModelProvider, ModelRequest } from "./model-provider.js";
import { TracedProvider } from "./traced-provider.js";

const request: ModelRequest = { model: "gpt-test", system: "", messages: [{ role: "user", content: "hi" }], tools: [] };

/** Yields `chunks`, then fails with `error` when given. */
function scripted(chunks: ModelChunk[], error?: Error): ModelProvider {
  return {
    async *stream() {
      for (const chunk of chunks) yield chunk;
      if (error) throw error;
    },
  };
}

async function drain(stream: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const out: ModelChunk[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

let uninstall: (() => void) | undefined;
afterEach(() => uninstall?.());

function recorder(): EndedSpan[] {
  const spans: EndedSpan[] = [];
  uninstall = installSpanSink({ record: (span) => spans.push(span) }, { sampleRatio: 1 });
  return spans;
}

const ANSWER: ModelChunk[] = [
  { type: "text", text: "hello" },
  { type: "usage", inputTokens: 12, outputTokens: 3 },
  { type: "stop", reason: "stop" },
];

describe("TracedProvider", () => {
  it("hands the stream through untouched when tracing is off", async () => {
    const inner = scripted(ANSWER);
    const stream = new TracedProvider(inner, "fake").stream(request, new AbortController().signal);
    expect(await drain(stream)).toEqual(ANSWER);
  });

  it("records a model call as a client span of the run, with provider, model, tokens and why it stopped", async () => {
    const spans = recorder();
    const run = startSpan();
    const chunks = await runInTrace(run, () => drain(new TracedProvider(scripted(ANSWER), "fake").stream(request, new AbortController().signal)));
    expect(chunks).toEqual(ANSWER);
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({
      service: "agent-runner",
      name: "chat gpt-test",
      kind: "client",
      trace: { traceId: run.traceId, parentSpanId: run.spanId },
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "fake",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.response.finish_reasons": "stop",
      },
    });
    expect(spans[0]!.error).toBeUndefined();
  });

  it("marks a failed call ERROR, an aborted one ABORTED, and ends a call its reader left early", async () => {
    const spans = recorder();
    const provider = new TracedProvider(scripted([{ type: "text", text: "par" }], new Error("upstream 500")), "fake");
    await runInTrace(startSpan(), async () => {
      await expect(drain(provider.stream(request, new AbortController().signal))).rejects.toThrow("upstream 500");
      const aborted = new AbortController();
      aborted.abort();
      await expect(drain(provider.stream(request, aborted.signal))).rejects.toThrow("upstream 500");
      for await (const chunk of new TracedProvider(scripted(ANSWER), "fake").stream(request, new AbortController().signal)) {
        if (chunk.type === "text") break;
      }
    });
    expect(spans.map((span) => span.error)).toEqual(["ERROR", "ABORTED", "ERROR"]);
  });
});
