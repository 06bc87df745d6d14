import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { bodyFields, type PlatformFake, startPlatformFake } from "./platform-fake.js";

describe("startPlatformFake", () => {
  let fake: PlatformFake;
  beforeAll(async () => {
    fake = await startPlatformFake({
      basePath: "/api",
      tellsRetryAfter: true,
      dedupesOnClientKey: false,
      wire: {
        route: (req, ctx) => {
          ctx.deliver({ id: String(ctx.delivered.length + 1), account: "a", chat: "c", media: [] });
          return { status: 200, json: { echo: req.body, path: req.path, query: req.query } };
        },
        reject: ({ status = 400, reason }) => ({ status, json: { reason: reason ?? "no" } }),
        rateLimit: ({ retryAfterSeconds }) => ({ status: 429, headers: { "retry-after": String(retryAfterSeconds) }, json: {} }),
        unavailable: ({ status = 503 }) => ({ status, text: "down" }),
      },
    });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  it("listens on a loopback port with the base path in its URL", () => {
    expect(fake.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
  });

  it("records method, path, query, headers and the parsed JSON body", async () => {
    const res = await fetch(`${fake.baseUrl}/x?a=1`, { method: "POST", headers: { "content-type": "application/json", "x-k": "v" }, body: '{"n":1}' });
    expect(await res.json()).toEqual({ echo: { n: 1 }, path: "/api/x", query: { a: "1" } });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ method: "POST", path: "/api/x", query: { a: "1" }, body: { n: 1 } });
    expect(fake.requests[0]!.headers["x-k"]).toBe("v");
    expect(fake.delivered).toHaveLength(1);
  });

  it("parses form and multipart bodies, files included", async () => {
    await fetch(`${fake.baseUrl}/f`, { method: "POST", body: new URLSearchParams({ a: "b" }) });
    const form = new FormData();
    form.set("field", "value");
    form.set("doc", new Blob([new Uint8Array([1, 2, 3])], { type: "application/pdf" }), "r.pdf");
    await fetch(`${fake.baseUrl}/m`, { method: "POST", body: form });
    expect(fake.requests[0]!.body).toEqual({ a: "b" });
    const multipart = bodyFields(fake.requests[1]!);
    expect(multipart.field).toBe("value");
    expect(multipart.doc).toEqual({ filename: "r.pdf", contentType: "application/pdf", data: new Uint8Array([1, 2, 3]) });
  });

  it("marks a body that does not parse", async () => {
    await fetch(`${fake.baseUrl}/bad`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(fake.requests[0]!.bodyError).toBe("invalid JSON");
  });

  it("answers scripted steps in order, then normally again", async () => {
    fake.next({ kind: "reject", reason: "because" });
    fake.next({ kind: "rate_limit", retryAfterSeconds: 3 });
    fake.next({ kind: "unavailable" }, 2);
    fake.next({ kind: "raw", status: 418, body: "teapot" });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await fetch(`${fake.baseUrl}/s`)).status);
    expect(statuses).toEqual([400, 429, 503, 503, 418, 200]);
    expect(fake.requests).toHaveLength(6);
    expect(fake.delivered).toHaveLength(1);
  });

  it("delays an answer, and cuts a connection", async () => {
    fake.next({ kind: "delay", ms: 150 });
    const started = Date.now();
    expect((await fetch(`${fake.baseUrl}/d`)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    fake.next({ kind: "drop" });
    await expect(fetch(`${fake.baseUrl}/d`)).rejects.toThrow();
  });

  it("does not handle a delayed request whose client gave up", async () => {
    fake.next({ kind: "delay", ms: 200 });
    await expect(fetch(`${fake.baseUrl}/gone`, { signal: AbortSignal.timeout(50) })).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.requests).toHaveLength(1);
    expect(fake.delivered).toHaveLength(0);
  });

  it("forgets requests, deliveries and unused steps on reset", async () => {
    fake.next({ kind: "unavailable" });
    await fetch(`${fake.baseUrl}/r`);
    fake.next({ kind: "unavailable" });
    fake.reset();
    expect(fake.requests).toHaveLength(0);
    expect((await fetch(`${fake.baseUrl}/r`)).status).toBe(200);
  });

  it("closes even while an answer is delayed", async () => {
    const other = await startPlatformFake({
      tellsRetryAfter: false,
      dedupesOnClientKey: false,
      wire: {
        route: () => ({ status: 200, text: "ok" }),
        reject: () => ({ status: 400 }),
        rateLimit: () => ({ status: 429 }),
        unavailable: () => ({ status: 503 }),
      },
    });
    other.next({ kind: "delay", ms: 60_000 });
    const pending = fetch(other.baseUrl).catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await other.close();
    await pending;
  });
});
