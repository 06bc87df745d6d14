import { describe, expect, it } from "vitest";
import { HttpError } from "./http-error.js";
import { readSse, readSseBatches, type SseEvent } from "./sse.js";

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
  for await (const event of readSse(stream, { name: "test", idleMs, signal: new AbortController().signal })) {
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

  it("accepts bare CR line endings, and all three mixed in one stream", async () => {
    const bytes = encoder.encode(WIRE.replace(/\n/g, "\r"));
    expect(await read(body([bytes]))).toEqual(EXPECTED);
    for (let cut = 1; cut < bytes.length; cut += 5) {
      expect(await read(body([bytes.subarray(0, cut), bytes.subarray(cut)])), `split at byte ${cut}`).toEqual(EXPECTED);
    }
    const mixed = "event: a\rdata: 1\r\ndata: 2\n\rdata: 3\r\r\ndata: 4\n\n";
    expect(await read(body([encoder.encode(mixed)]))).toEqual([
      { event: "a", data: "1\n2" },
      { event: "message", data: "3" },
      { event: "message", data: "4" },
    ]);
  });

  it("treats a CR at the end of one read and an LF at the start of the next as one line end", async () => {
    const parts = ["data: x\r", "\ndata: y\r", "\n\r", "\n"].map((p) => encoder.encode(p));
    expect(await read(body(parts))).toEqual([{ event: "message", data: "x\ny" }]);
  });

  it("skips a leading byte-order mark and yields empty data", async () => {
    expect(await read(body([encoder.encode("\uFEFFdata:\n\ndata: z\n\n")]))).toEqual([
      { event: "message", data: "" },
      { event: "message", data: "z" },
    ]);
  });

  it("yields a last event that has no blank line after it", async () => {
    expect(await read(body([encoder.encode("data: tail\n")]))).toEqual([{ event: "message", data: "tail" }]);
    expect(await read(body([encoder.encode("data: tail")]))).toEqual([{ event: "message", data: "tail" }]);
    expect(await read(body([encoder.encode("data: tail\r")]))).toEqual([{ event: "message", data: "tail" }]);
  });

  it("fails retryably when the connection drops mid-stream", async () => {
    const err = await failure(body([encoder.encode("data: 1\n\n")], "error"));
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ retryable: true, message: expect.stringContaining("stream dropped") });
  });

  it("refuses an event larger than maxEventChars", async () => {
    // It arrives in pieces, as a hostile stream would send it, so it has to be buffered.
    const pieces = ["data: ", ...Array.from({ length: 10 }, () => "x".repeat(500)), "\n\n"].map((p) => encoder.encode(p));
    const err = await (async () => {
      for await (const _ of readSse(body(pieces), { name: "test", idleMs: 5_000, signal: new AbortController().signal, maxEventChars: 1_000 }));
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "HttpError", kind: "too_large", retryable: false });
  });

  it("counts only the time a read waits: a consumer slower than idleMs between events is not a stall", async () => {
    const events: SseEvent[] = [];
    const parts = ["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"].map((p) => encoder.encode(p));
    for await (const event of readSse(body(parts), { name: "test", idleMs: 30, signal: new AbortController().signal })) {
      events.push(event);
      await new Promise((resolve) => setTimeout(resolve, 80));
    }
    expect(events.map((e) => e.data)).toEqual(["1", "2", "3"]);
  });

  it("fails retryably when the stream goes silent for idleMs", async () => {
    const err = await failure(body([encoder.encode("data: 1\n\n")], "stall"), 50);
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ retryable: true, message: expect.stringContaining("stalled") });
  });
});

describe("readSseBatches", () => {
  it("gives the events of each read together, the unterminated last one at the end, then undefined", async () => {
    const reads = ["data: a\n\ndata: b\n\nda", "ta: c\n\n", ": only a comment\n", "data: d"].map((t) => encoder.encode(t));
    const batches = readSseBatches(body(reads), { name: "test", idleMs: 5_000, signal: new AbortController().signal });
    const got: string[][] = [];
    for (let batch = await batches.next(); batch !== undefined; batch = await batches.next()) got.push(batch.map((e) => e.data));
    expect(got).toEqual([["a", "b"], ["c"], [], [], ["d"]]);
    expect(await batches.next()).toBeUndefined();
  });

  it("stops reading once closed", async () => {
    const batches = readSseBatches(body([encoder.encode("data: a\n\n"), encoder.encode("data: b\n\n")]), {
      name: "test",
      idleMs: 5_000,
      signal: new AbortController().signal,
    });
    expect((await batches.next())?.map((e) => e.data)).toEqual(["a"]);
    batches.close();
    expect(await batches.next()).toBeUndefined();
  });
});
