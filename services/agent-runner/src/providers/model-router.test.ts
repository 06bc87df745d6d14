import { createMemoryFastStore, type FastStore } from "@gw/store";
import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelChunk, ModelRequest } from "./model-provider.js";
import { keyId, ProviderRegistry } from "./provider-registry.js";

const request = (message: string): ModelRequest => ({ model: "", system: "", messages: [{ role: "user", content: message }], tools: [] });
const NO_WAIT = { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 };

async function drain(stream: AsyncIterable<ModelChunk>): Promise<{ text: string; error?: Error }> {
  let text = "";
  try {
    for await (const chunk of stream) if (chunk.type === "text") text += chunk.text;
    return { text };
  } catch (error) {
    return { text, error: error as Error };
  }
}

let fakes: FakeModelServer[];
let store: FastStore;

const models = () => ({
  providers: {
    one: { kind: "openai" as const, baseUrl: fakes[0]!.baseUrl, apiKey: "sk-one", timeoutMs: 300 },
    two: { kind: "openai" as const, baseUrl: fakes[1]!.baseUrl, apiKey: "sk-two", timeoutMs: 300 },
    three: { kind: "anthropic" as const, baseUrl: fakes[2]!.baseUrl, apiKeys: ["ak-a", "ak-b"], timeoutMs: 300 },
    east: { kind: "openai" as const, baseUrl: fakes[0]!.baseUrl, apiKey: "sk-east", weight: 3 },
    west: { kind: "openai" as const, baseUrl: fakes[1]!.baseUrl, apiKey: "sk-west", weight: 1 },
  },
});
/** A runner's registry: every one made here shares `store`, as runners share Redis. */
const runner = () => new ProviderRegistry(models(), { retry: NO_WAIT, fastStore: store });

beforeAll(async () => {
  fakes = await Promise.all([startFakeModelServer(), startFakeModelServer(), startFakeModelServer()]);
});
afterAll(async () => {
  await Promise.all(fakes.map((f) => f.close()));
});
beforeEach(() => {
  store = createMemoryFastStore();
});

describe("a fallback chain", () => {
  it("passes a 429 and a timeout on to the third model, and names the fallbacks and the model that answered", async () => {
    fakes[0]!.script({ kind: "status", status: 429, retryAfter: "30" });
    fakes[1]!.script({ kind: "hang" });
    const { provider, route } = runner().resolve("one/m1,two/m2,three/m3");
    const out = await drain(provider.stream(request("hello"), new AbortController().signal));
    expect(out).toEqual({ text: "You said: hello" });
    expect(route.answered).toBe("three/m3");
    expect(route.fallbacks).toEqual([
      { model: "one/m1", key: keyId("sk-one"), reason: "rate_limit", status: 429 },
      { model: "two/m2", key: keyId("sk-two"), reason: "timeout" },
    ]);
  });

  it("cools the 429's key for every runner: another registry on the same store skips it without calling it", async () => {
    fakes[0]!.script({ kind: "status", status: 429, retryAfter: "30" });
    await drain(runner().resolve("one/m1,two/m2").provider.stream(request("first"), new AbortController().signal));
    const before = fakes[0]!.requests.length;
    const { provider, route } = runner().resolve("one/m1,two/m2");
    expect(await drain(provider.stream(request("second"), new AbortController().signal))).toEqual({ text: "You said: second" });
    expect(fakes[0]!.requests.length).toBe(before);
    expect([route.answered, route.fallbacks]).toEqual(["two/m2", []]);
  });

  it("names the model a call asks first before it is made, from the cooldowns it then routes by", async () => {
    fakes[0]!.script({ kind: "status", status: 429, retryAfter: "30" });
    expect(await runner().resolve("one/m1,two/m2").firstChoice()).toBe("one/m1");
    await drain(runner().resolve("one/m1,two/m2").provider.stream(request("cool one"), new AbortController().signal));
    const reads = { count: 0 };
    const getMany: FastStore["values"]["getMany"] = (keys) => (reads.count++, store.values.getMany(keys));
    const counting: FastStore = Object.assign(Object.create(store) as FastStore, { values: Object.assign(Object.create(store.values) as FastStore["values"], { getMany }) });
    const { provider, firstChoice } = new ProviderRegistry(models(), { retry: NO_WAIT, fastStore: counting }).resolve("one/m1,two/m2");
    expect(await firstChoice()).toBe("two/m2");
    const afterPlan = reads.count;
    expect(await drain(provider.stream(request("after"), new AbortController().signal))).toEqual({ text: "You said: after" });
    // The call used the plan it announced: no second cooldown read.
    expect(reads.count).toBe(afterPlan);
    expect(await runner().resolve("one/m1").firstChoice()).toBe("one/m1");
  });

  it("does not fall back once output began: the run fails with the first model's error", async () => {
    fakes[0]!.script({ kind: "drop", chunk: "partial " });
    const before = fakes[1]!.requests.length;
    const { provider, route } = runner().resolve("one/m1,two/m2");
    const out = await drain(provider.stream(request("hello"), new AbortController().signal));
    expect(out.text).toBe("partial ");
    expect(out.error?.name).toBe("ProviderError");
    expect(fakes[1]!.requests.length).toBe(before);
    expect(route).toEqual({ answered: "", fallbacks: [] });
  });

  it("fails with the last model's error when every model failed, and refuses a request error at once", async () => {
    fakes[0]!.script({ kind: "status", status: 503 });
    fakes[1]!.script({ kind: "status", status: 500 });
    const failed = await drain(runner().resolve("one/m1,two/m2").provider.stream(request("x"), new AbortController().signal));
    expect(failed.error?.message).toContain("500");
    fakes[0]!.script({ kind: "status", status: 400 });
    const before = fakes[1]!.requests.length;
    const refused = await drain(runner().resolve("one/m1,two/m2").provider.stream(request("y"), new AbortController().signal));
    expect(refused.error?.message).toContain("400");
    expect(fakes[1]!.requests.length).toBe(before);
  });

  it("cools a whole provider after repeated 5xx, for every runner", async () => {
    for (let i = 0; i < 3; i++) {
      fakes[0]!.script({ kind: "status", status: 502 });
      await drain(runner().resolve("one/m1,two/m2").provider.stream(request(`fail ${i}`), new AbortController().signal));
    }
    const before = fakes[0]!.requests.length;
    const { provider, route } = runner().resolve("one/m1,two/m2");
    await drain(provider.stream(request("after"), new AbortController().signal));
    expect([fakes[0]!.requests.length, route.answered]).toEqual([before, "two/m2"]);
  });

  it("still calls a single model that is cooling down (nothing else could answer)", async () => {
    fakes[0]!.script({ kind: "status", status: 429, retryAfter: "30" });
    const registry = runner();
    expect((await drain(registry.resolve("one/m1").provider.stream(request("a"), new AbortController().signal))).error?.message).toContain("429");
    expect(await drain(registry.resolve("one/m1").provider.stream(request("b"), new AbortController().signal))).toEqual({ text: "You said: b" });
  });
});

describe("key rotation", () => {
  it("spreads calls over the provider's keys in turn, and a 429 moves the call to the other key", async () => {
    const registry = runner();
    const keysSeen = () => fakes[2]!.requests.slice(-4).map((r) => r.headers["x-api-key"]);
    for (let i = 0; i < 4; i++) await drain(registry.resolve("three/m3").provider.stream(request(`k${i}`), new AbortController().signal));
    expect(keysSeen()).toEqual(["ak-a", "ak-b", "ak-a", "ak-b"]);
    fakes[2]!.script({ kind: "status", status: 429, retryAfter: "30" });
    const { provider, route } = registry.resolve("three/m3");
    expect(await drain(provider.stream(request("limited"), new AbortController().signal))).toEqual({ text: "You said: limited" });
    expect(fakes[2]!.requests.slice(-2).map((r) => r.headers["x-api-key"])).toEqual(["ak-a", "ak-b"]);
    expect(route.fallbacks).toEqual([{ model: "three/m3", key: keyId("ak-a"), reason: "rate_limit", status: 429 }]);
    // ak-a cools for 30 s: every call now takes ak-b.
    for (let i = 0; i < 2; i++) await drain(registry.resolve("three/m3").provider.stream(request(`after ${i}`), new AbortController().signal));
    expect(fakes[2]!.requests.slice(-2).map((r) => r.headers["x-api-key"])).toEqual(["ak-b", "ak-b"]);
  });
});

describe("weighted deployments", () => {
  it("spread the calls of one model over the providers serving it, each still the other's fallback", async () => {
    const registry = runner();
    const seen = () => [...fakes[0]!.requests, ...fakes[1]!.requests].map((r) => r.headers.authorization).filter((a) => a === "Bearer sk-east" || a === "Bearer sk-west");
    const before = seen().length;
    for (let i = 0; i < 40; i++) await drain(registry.resolve("east/gpt,west/gpt").provider.stream(request(`w${i}`), new AbortController().signal));
    const calls = seen().slice(before);
    expect(calls).toHaveLength(40);
    expect(new Set(calls)).toEqual(new Set(["Bearer sk-east", "Bearer sk-west"]));
    // Both fail: whichever was drawn first, the other was tried after it.
    fakes[0]!.script({ kind: "status", status: 503 });
    fakes[1]!.script({ kind: "status", status: 503 });
    const { provider, route } = registry.resolve("east/gpt,west/gpt");
    expect((await drain(provider.stream(request("both fail"), new AbortController().signal))).error?.message).toContain("503");
    expect(route.fallbacks).toHaveLength(1);
    expect([fakes[0]!, fakes[1]!].map((f) => JSON.stringify(f.requests.at(-1)?.body).includes("both fail"))).toEqual([true, true]);
  });
});

describe("a FastStore that fails", () => {
  it("leaves calls going, without cooldowns, and reports each failure", async () => {
    const broken = createMemoryFastStore();
    broken.values.getMany = () => Promise.reject(new Error("store down"));
    broken.counters.hit = () => Promise.reject(new Error("store down"));
    const errors: unknown[] = [];
    const registry = new ProviderRegistry(models(), { retry: NO_WAIT, fastStore: broken, onStoreError: (err) => errors.push(err) });
    fakes[0]!.script({ kind: "status", status: 429, retryAfter: "30" });
    const { provider, route } = registry.resolve("one/m1,two/m2");
    expect(await drain(provider.stream(request("store down"), new AbortController().signal))).toEqual({ text: "You said: store down" });
    expect(route.answered).toBe("two/m2");
    // The read before the call and the 429's cooldown write.
    expect(errors.map((e) => (e as Error).message)).toEqual(["store down", "store down"]);
  });
});

describe("a FastStore that does not answer", () => {
  it("is given up after a bound: the call goes on without cooldowns", async () => {
    const stalled = createMemoryFastStore();
    stalled.values.getMany = () => new Promise(() => undefined);
    const errors: unknown[] = [];
    const registry = new ProviderRegistry(models(), { retry: NO_WAIT, fastStore: stalled, onStoreError: (err) => errors.push(err) });
    const { provider, route } = registry.resolve("one/m1,two/m2");
    expect(await drain(provider.stream(request("store stalled"), new AbortController().signal))).toEqual({ text: "You said: store stalled" });
    expect(route.answered).toBe("one/m1");
    expect(String(errors[0])).toContain("no answer from the FastStore");
  });
});
