import { describe, expect, it } from "vitest";
import { ProviderError } from "./model-provider.js";
import { readSse, type SseEvent } from "./sse.js";

const encoder = new TextEncoder();

/** A body delivering `parts` as separate reads, then ending (or failing, or going silent). */
function body(parts: Uint8Array[], end: "close" | "error" | "stall" = "close"): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < parts.length) controller.enqueue(parts[i++]!);
      else if (end === "close") controller.close();
      else if (end === "error") controller.error(new Error("socket hang up"));
      // "stall": enqueue nothing, the reader waits
    },
  });
}

async function read(stream: ReadableStream<Uint8Array>, idleMs = 5_000): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(stream, { provider: "test", idleMs, signal: new AbortController().signal })) {
    events.push(event);
  }
  return events;
}

async function failure(stream: ReadableStream<Uint8Array>, idleMs = 5_000): Promise<unknown> {
  return read(stream, idleMs).then(
    () => undefined,
    (err: unknown) => err,
  );
}

const WIRE =
  ": keep-alive comment\n" +
  "event: message_start\n" +
  'data: {"a":1}\n' +
  "\n" +
  "id: 7\n" +
  "retry: 100\n" +
  "data:first line\n" +
  "data: second line é€😀\n" +
  "\n" +
  "event: ping\n" +
  "\n" +
  "data: [DONE]\n" +
  "\n";

const EXPECTED: SseEvent[] = [
  { event: "message_start", data: '{"a":1}' },
  { event: "message", data: "first line\nsecond line é€😀" },
  { event: "message", data: "[DONE]" },
];

describe("readSse", () => {
  it("parses events, ignoring comments, unknown fields and events without data", async () => {
    expect(await read(body([encoder.encode(WIRE)]))).toEqual(EXPECTED);
  });

  it("gives the same events wherever the chunk boundaries fall, even inside a UTF-8 character", async () => {
    const bytes = encoder.encode(WIRE);
    for (let cut = 1; cut < bytes.length; cut++) {
      const events = await read(body([bytes.subarray(0, cut), bytes.subarray(cut)]));
      expect(events, `split at byte ${cut}`).toEqual(EXPECTED);
    }
    const oneByteReads = Array.from(bytes, (b) => Uint8Array.of(b));
    expect(await read(body(oneByteReads))).toEqual(EXPECTED);
  });

  it("accepts CRLF line endings, also when CR and LF arrive in different reads", async () => {
    const bytes = encoder.encode(WIRE.replace(/\n/g, "\r\n"));
    expect(await read(body([bytes]))).toEqual(EXPECTED);
    for (let cut = 1; cut < bytes.length; cut += 7) {
      expect(await read(body([bytes.subarray(0, cut), bytes.subarray(cut)])), `split at byte ${cut}`).toEqual(EXPECTED);
    }
  });

  it("yields a last event that has no blank line after it", async () => {
    expect(await read(body([encoder.encode("data: tail\n")]))).toEqual([{ event: "message", data: "tail" }]);
  });

  it("fails retryably when the connection drops mid-stream", async () => {
    const err = await failure(body([encoder.encode("data: 1\n\n")], "error"));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ retryable: true, message: expect.stringContaining("stream dropped") });
  });

  it("fails retryably when the stream goes silent for idleMs", async () => {
    const err = await failure(body([encoder.encode("data: 1\n\n")], "stall"), 50);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ retryable: true, message: expect.stringContaining("stalled") });
  });
});
