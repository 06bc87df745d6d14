import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpClient } from "./http-client.js";
import type { HttpClientOptions } from "./http-client-types.js";
import { HttpError } from "./http-error.js";
import { retryAfterFromBody } from "./retry-after.js";
import { readSse } from "./sse.js";
import { startTestUpstream, type TestUpstream } from "./test-upstream.js";
import { freePort } from "@gw/testing";

let upstream: TestUpstream;
beforeAll(async () => {
  upstream = await startTestUpstream();
});
afterAll(async () => {
  await upstream?.close();
});

const clients: Array<ReturnType<typeof createHttpClient>> = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

function client(over: Partial<HttpClientOptions> = {}) {
  const c = createHttpClient({ name: "upstream", baseUrl: `${upstream.origin}/api`, timeoutMs: 5_000, ...over });
  clients.push(c);
  return c;
}

async function failure(work: Promise<unknown>): Promise<HttpError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof HttpError)) throw new Error(`expected an HttpError, got ${String(err)}`);
  return err;
}

interface Echo {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string;
}

describe("requestJson", () => {
  it("sends method, path below the base, query, JSON body and default headers; returns status, headers, data", async () => {
    const res = await client({ headers: { Authorization: "Bearer k", "X-Default": "d" } }).requestJson<Echo>({
      method: "PUT",
      path: "/echo",
      query: { a: 1, b: "x y", skip: undefined, flag: true },
      json: { hello: "wörld" },
      headers: { "x-default": "overridden" },
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.data).toMatchObject({ method: "PUT", path: "/api/echo", query: "?a=1&b=x+y&flag=true", body: '{"hello":"wörld"}' });
    expect(res.data.headers).toMatchObject({ authorization: "Bearer k", "x-default": "overridden", "content-type": "application/json" });
  });

  it("defaults to GET without a body and POST with one", async () => {
    expect((await client().requestJson<Echo>({ path: "echo" })).data.method).toBe("GET");
    expect((await client().requestJson<Echo>({ path: "echo", body: "raw", headers: { "content-type": "text/plain" } })).data).toMatchObject({
      method: "POST",
      body: "raw",
    });
  });

  it("sends form and multipart bodies", async () => {
    const form = await client().requestJson<Echo>({ path: "echo", form: { chat_id: "42", text: "a&b c" } });
    expect(form.data.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(form.data.body).toBe("chat_id=42&text=a%26b+c");

    const parts = new FormData();
    parts.append("chat_id", "42");
    parts.append("photo", new Blob([Buffer.from("PNGDATA")], { type: "image/png" }), "cat.png");
    const multi = await client().requestJson<Echo>({ path: "echo", multipart: parts });
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(multi.data.headers["content-type"]!)?.[1];
    expect(boundary).toBeDefined();
    expect(multi.data.body).toContain(`--${boundary}\r\nContent-Disposition: form-data; name="chat_id"\r\n\r\n42\r\n`);
    expect(multi.data.body).toContain('name="photo"; filename="cat.png"\r\nContent-Type: image/png\r\n\r\nPNGDATA\r\n');
  });

  it("validates with parse, and refuses a body that does not fit (not retryable)", async () => {
    const parse = (data: unknown) => {
      const method = (data as { method?: unknown }).method;
      if (typeof method !== "string") throw new Error("method missing");
      return method;
    };
    expect((await client().requestJson({ path: "echo", parse })).data).toBe("GET");
    const err = await failure(client().requestJson({ path: "large-json", parse }));
    expect(err).toMatchObject({ kind: "invalid_response", retryable: false, message: expect.stringContaining("method missing") });
  });

  it("reads an empty body as undefined, and refuses text and bodies over maxBytes", async () => {
    expect((await client().requestJson({ path: "empty" })).data).toBeUndefined();
    expect(await failure(client().requestJson({ path: "text" }))).toMatchObject({ kind: "invalid_response", retryable: false });
    const big = await failure(client({ maxBodyBytes: 1_000 }).requestJson({ path: "large-json" }));
    expect(big).toMatchObject({ kind: "too_large", retryable: false, message: expect.stringContaining("more than 1000 bytes") });
    expect((await client().requestJson({ path: "large-json", maxBytes: 20_000 })).status).toBe(200);
  });

  it("refuses two bodies, and a relative path without a base URL", async () => {
    await expect(client().requestJson({ path: "echo", json: {}, form: {} })).rejects.toThrow(/one body, got json and form/);
    await expect(createHttpClient({ name: "bare" }).requestJson({ path: "echo" })).rejects.toThrow(/needs a client with a baseUrl/);
    expect(() => createHttpClient({ name: "bad", baseUrl: "ftp://x/" })).toThrow(/must be http/);
    expect(() => createHttpClient({ name: "bad", baseUrl: "https://u:p@x/" })).toThrow(/credentials/);
  });
});

describe("HTTP errors", () => {
  it.each([
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [409, false],
    [422, false],
    [408, true],
    [429, true],
    [500, true],
    [502, true],
    [503, true],
  ])("HTTP %i is an HttpError with retryable %s", async (code, retryable) => {
    const err = await failure(client().requestJson({ path: "status", query: { code } }));
    expect(err).toMatchObject({ kind: "status", status: code, retryable, message: `upstream answered HTTP ${code}: refused undefined` });
  });

  it("reads Retry-After as seconds or a date, and ignores garbage", async () => {
    const seconds = await failure(client().requestJson({ path: "status", query: { code: 429, retryAfter: "3" } }));
    expect(seconds.retryAfterMs).toBe(3_000);
    const date = new Date(Date.now() + 60_000).toUTCString();
    const dated = await failure(client().requestJson({ path: "status", query: { code: 503, retryAfter: date } }));
    expect(dated.retryAfterMs).toBeGreaterThan(55_000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(60_000);
    const garbage = await failure(client().requestJson({ path: "status", query: { code: 503, retryAfter: "later" } }));
    expect(garbage.retryAfterMs).toBeUndefined();
  });

  it("lets a body hook supply the platform's message, retry_after and an account-wide limit", async () => {
    const plain = await failure(client().requestJson({ path: "telegram-429" }));
    expect(plain).toMatchObject({ status: 429, retryAfterMs: undefined, message: "upstream answered HTTP 429: Too Many Requests: retry after 7" });
    const hooked = await failure(
      client({ name: "telegram", errorBody: ({ json }) => ({ retryAfterMs: retryAfterFromBody(json) }) }).requestJson({ path: "telegram-429" }),
    );
    expect(hooked).toMatchObject({ status: 429, retryable: true, retryAfterMs: 7_000 });
    const overridden = await failure(
      client({ errorBody: ({ status }) => (status === 503 ? { message: "maintenance", retryable: false } : undefined) }).requestJson({
        path: "status",
        query: { code: 503 },
      }),
    );
    expect(overridden).toMatchObject({ retryable: false, accountWide: false, message: "upstream answered HTTP 503: maintenance" });
    const wide = await failure(client({ errorBody: () => ({ accountWide: true }) }).requestJson({ path: "telegram-429" }));
    expect(wide).toMatchObject({ status: 429, accountWide: true });
  });

  it("reads at most maxErrorBodyBytes of an error body", async () => {
    const err = await failure(client({ maxErrorBodyBytes: 1_000 }).requestJson({ path: "huge-error" }));
    expect(err).toMatchObject({ status: 500, retryable: true });
    expect(err.body).toBe("e".repeat(1_000));
  });

  it("scrubs secrets, URL credentials and bot tokens from message, body and url", async () => {
    const token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
    const c = client({ baseUrl: `${upstream.origin}/bot${token}`, headers: { authorization: "Bearer sk-very-secret-1" }, secrets: ["sk-very-secret-1"] });
    const err = await failure(c.requestJson({ path: "status", query: { code: 401 } }));
    expect(err.message).toBe("upstream answered HTTP 401: refused Bearer [REDACTED]");
    expect(err.body).toBe('{"error":{"message":"refused Bearer [REDACTED]"}}');
    expect(err.url).toBe(`${upstream.origin}/bot[REDACTED]/status?code=401`);
    const port = await freePort();
    const down = await failure(
      createHttpClient({ name: "down", baseUrl: `http://127.0.0.1:${port}/bot${token}` }).requestJson({ path: "getMe" }),
    );
    expect(down.message).toBe(`cannot reach down at http://127.0.0.1:${port}/bot[REDACTED]/getMe: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(JSON.stringify(down)).not.toContain(token);
  });

  it("is a retryable network error when nothing listens", async () => {
    const port = await freePort();
    const err = await failure(createHttpClient({ name: "nobody", baseUrl: `http://127.0.0.1:${port}` }).requestJson({ path: "x" }));
    expect(err).toMatchObject({ kind: "network", retryable: true, status: undefined, message: expect.stringContaining("cannot reach nobody") });
  });
});

describe("deadline and abort", () => {
  it("fails with a retryable timeout when no headers arrive within the deadline", async () => {
    const err = await failure(client().requestJson({ path: "no-headers", timeoutMs: 150 }));
    expect(err).toMatchObject({ kind: "timeout", retryable: true, message: expect.stringContaining("no answer within 150 ms") });
  });

  it("covers the body of requestJson too", async () => {
    const err = await failure(client({ timeoutMs: 150 }).requestJson({ path: "silent" }));
    expect(err).toMatchObject({ kind: "timeout", message: expect.stringContaining("no answer within 150 ms") });
  });

  it("rejects with the caller's reason, before the headers and while a body streams", async () => {
    const early = new AbortController();
    const pending = client().requestJson({ path: "no-headers", signal: early.signal });
    const reason = new Error("run aborted");
    setTimeout(() => early.abort(reason), 20);
    await expect(pending).rejects.toBe(reason);

    const late = new AbortController();
    const res = await client().request({ path: "drip", signal: late.signal });
    const reading = (async () => {
      for await (const _ of res.body) late.abort(reason);
    })();
    await expect(reading).rejects.toBe(reason);

    const before = new AbortController();
    before.abort(reason);
    await expect(client().request({ path: "echo", signal: before.signal })).rejects.toBe(reason);
  });

  it("fails a streamed body that goes silent for idleMs", async () => {
    const res = await client().request({ path: "drip", idleMs: 150 });
    const err = await (async () => {
      for await (const _ of res.body);
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "HttpError", kind: "timeout", retryable: true, message: expect.stringContaining("stalled") });
  });
});

describe("streaming", () => {
  it("reads SSE through request() and keeps the connection when the reader stops early", async () => {
    const c = client();
    const before = upstream.connections();
    for (let round = 0; round < 3; round++) {
      const res = await c.request({ method: "POST", path: "sse", json: {}, headers: { accept: "text/event-stream" } });
      const seen: string[] = [];
      for await (const event of readSse(res.body, { name: "upstream", idleMs: 2_000, signal: new AbortController().signal })) {
        seen.push(event.event);
        if (event.event === "two") break;
      }
      expect(seen).toEqual(["one", "two"]);
      await new Promise((resolve) => setTimeout(resolve, 60)); // the tail drains
    }
    expect(upstream.connections() - before).toBe(1);
  });

  it("throws the status error with the body read, for streams too", async () => {
    const err = await failure(client().request({ path: "status", query: { code: 503 } }));
    expect(err).toMatchObject({ status: 503, retryable: true, message: "upstream answered HTTP 503: refused undefined" });
  });

  it("hands out any status okStatus accepts", async () => {
    const res = await client().request({ path: "status", query: { code: 404 }, okStatus: () => true });
    expect(res.status).toBe(404);
    res.body.release();
  });
});
