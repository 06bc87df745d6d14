import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type ModelChunk, type ModelProvider, type ModelRequest, ProviderError } from "./model-provider.js";
import { OpenAiProvider } from "./openai-provider.js";
import { retryDelayMs, type RetryPolicy } from "@gw/http-client";
import { RetryingProvider } from "./retrying-provider.js";
import { drain } from "./contract-helpers.js";

const request = (message: string): ModelRequest => ({
  model: "m",
  system: "",
  messages: [{ role: "user", content: message }],
  tools: [],
});

type Step = ProviderError | Error | { text: string; then?: ProviderError };

/** A provider that plays one step per attempt: fail at once, or stream a text and maybe fail after it. */
function scripted(steps: Step[]): ModelProvider & { calls: number } {
  const fake = {
    calls: 0,
    async *stream(): AsyncGenerator<ModelChunk> {
      const step = steps[Math.min(fake.calls, steps.length - 1)]!;
      fake.calls++;
      if (step instanceof Error) throw step;
      yield { type: "text", text: step.text };
      if (step.then) throw step.then;
    },
  };
  return fake;
}

const http = (status: number, retryAfterMs?: number) =>
  new ProviderError(`HTTP ${status}`, { status, retryable: status === 429 || status >= 500, retryAfterMs });


const NO_WAIT: RetryPolicy = { attempts: 3, baseDelayMs: 1, maxDelayMs: 1, random: () => 0 };

describe("retryDelayMs", () => {
  const policy: RetryPolicy = { attempts: 3, baseDelayMs: 250, maxDelayMs: 8_000, random: () => 1 };

  it("doubles the jitter ceiling per attempt, capped at maxDelayMs", () => {
    expect([0, 1, 2, 5, 10].map((attempt) => retryDelayMs(policy, attempt))).toEqual([250, 500, 1_000, 8_000, 8_000]);
    expect(retryDelayMs({ ...policy, random: () => 0 }, 3)).toBe(0);
    expect(retryDelayMs({ ...policy, random: () => 0.5 }, 1)).toBe(250);
  });

  it("waits at least a server's Retry-After, up to four times maxDelayMs", () => {
    const noJitter = { ...policy, random: () => 0 };
    expect(retryDelayMs(noJitter, 0, 1_500)).toBe(1_500);
    expect(retryDelayMs(policy, 2, 10)).toBe(1_000);
    expect(retryDelayMs(noJitter, 0, 3_600_000)).toBe(32_000);
  });
});

describe("RetryingProvider", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits for Retry-After on a 429, then succeeds", async () => {
    vi.useFakeTimers();
    const inner = scripted([http(429, 300), { text: "ok" }]);
    const result = drain(new RetryingProvider(inner, { ...NO_WAIT, maxDelayMs: 1_000 }).stream(request("x"), new AbortController().signal));
    await vi.advanceTimersByTimeAsync(299);
    expect(inner.calls, "still waiting for Retry-After").toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toEqual({ got: [{ type: "text", text: "ok" }] });
    expect(inner.calls).toBe(2);
  });

  it("backs off exponentially on 5xx and gives up after the last attempt", async () => {
    vi.useFakeTimers();
    const inner = scripted([http(503)]);
    const policy: RetryPolicy = { attempts: 3, baseDelayMs: 100, maxDelayMs: 8_000, random: () => 1 };
    const result = drain(new RetryingProvider(inner, policy).stream(request("x"), new AbortController().signal));
    await vi.advanceTimersByTimeAsync(99);
    expect(inner.calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(inner.calls).toBe(2);
    await vi.advanceTimersByTimeAsync(199);
    expect(inner.calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    const { error } = await result;
    expect(inner.calls).toBe(3);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 503, retryable: false, message: "HTTP 503 (after 3 attempts)" });
    expect((error as ProviderError).cause).toBeInstanceOf(ProviderError);
  });

  it("does not retry errors that are not retryable", async () => {
    const badRequest = http(400);
    const inner = scripted([badRequest, { text: "never" }]);
    const { error } = await drain(new RetryingProvider(inner, NO_WAIT).stream(request("x"), new AbortController().signal));
    expect(error).toBe(badRequest);
    expect(inner.calls).toBe(1);
  });

  it("does not retry once a chunk has reached the caller", async () => {
    const dropped = new ProviderError("stream dropped", { retryable: true });
    const inner = scripted([{ text: "partial ", then: dropped }, { text: "again" }]);
    const { got: chunks, error } = await drain(new RetryingProvider(inner, NO_WAIT).stream(request("x"), new AbortController().signal));
    expect(chunks).toEqual([{ type: "text", text: "partial " }]);
    expect(error).toBe(dropped);
    expect(inner.calls).toBe(1);
  });

  it("stops retrying when the run is aborted during the backoff", async () => {
    const controller = new AbortController();
    const inner = scripted([http(503, 60_000), { text: "never" }]);
    const result = drain(new RetryingProvider(inner, { ...NO_WAIT, maxDelayMs: 60_000 }).stream(request("x"), controller.signal));
    await vi.waitFor(() => expect(inner.calls).toBe(1));
    const reason = new Error("aborted by the client");
    controller.abort(reason);
    const { error } = await result;
    expect(error).toBe(reason);
    expect(inner.calls).toBe(1);
  });

  it("does not retry when the run was aborted before the failure", async () => {
    const controller = new AbortController();
    controller.abort();
    const inner = scripted([http(503), { text: "never" }]);
    const { error } = await drain(new RetryingProvider(inner, NO_WAIT).stream(request("x"), controller.signal));
    expect(error).toMatchObject({ status: 503 });
    expect(inner.calls).toBe(1);
  });
});

describe("RetryingProvider over the OpenAI wire", () => {
  let fake: FakeModelServer;
  beforeAll(async () => {
    fake = await startFakeModelServer();
  });
  afterAll(async () => {
    await fake?.close();
  });
  const provider = () =>
    new RetryingProvider(new OpenAiProvider({ name: "openai", baseUrl: fake.baseUrl, timeoutMs: 5_000 }), NO_WAIT);
  const attempts = (message: string) =>
    fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(message)).length;

  it("answers after a 429 with retry-after: 0", async () => {
    const { got: chunks, error } = await drain(provider().stream(request("fail429 once"), new AbortController().signal));
    expect(error).toBeUndefined();
    expect(chunks.some((c) => c.type === "text")).toBe(true);
    expect(attempts("fail429 once")).toBe(2);
  });

  it("gives up on a server that keeps answering 500 after three attempts", async () => {
    const { error } = await drain(provider().stream(request("fail500 always"), new AbortController().signal));
    expect(error).toMatchObject({ name: "ProviderError", status: 500, message: expect.stringContaining("after 3 attempts") });
    expect(attempts("fail500 always")).toBe(3);
  });

  it("does not replay a turn whose stream dropped after the first chunk", async () => {
    const { got: chunks, error } = await drain(provider().stream(request("drop midway"), new AbortController().signal));
    expect(chunks).toEqual([{ type: "text", text: "partial " }]);
    expect(error).toMatchObject({ name: "ProviderError" });
    expect(attempts("drop midway")).toBe(1);
  });
});
