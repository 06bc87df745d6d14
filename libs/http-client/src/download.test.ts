import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpClient } from "./http-client.js";
import type { HttpClientOptions } from "./http-client-types.js";
import { HttpError } from "./http-error.js";
import { startTestUpstream, type TestUpstream } from "./test-upstream.js";

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

/** A client for URLs from outside: no base URL, so every target is SSRF-checked. */
function media(over: Partial<HttpClientOptions> = {}) {
  const c = createHttpClient({ name: "media", ssrf: { allowHosts: ["127.0.0.1"] }, timeoutMs: 5_000, ...over });
  clients.push(c);
  return c;
}

const local = (path: string) => `${upstream.origin}${path}`;
const named = (path: string) => `http://localhost:${upstream.port}${path}`;
const redirectTo = (target: string, code = 302) => local(`/redirect?code=${code}&to=${encodeURIComponent(target)}`);

async function failure(work: Promise<unknown>): Promise<HttpError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof HttpError)) throw new Error(`expected an HttpError, got ${String(err)}`);
  return err;
}

describe("download", () => {
  it("reads a body within maxBytes", async () => {
    const got = await media().download(local("/bytes?n=1000"), { maxBytes: 1_000 });
    expect(got).toMatchObject({ status: 200, url: local("/bytes?n=1000"), truncated: false });
    expect(got.bytes).toEqual(Buffer.alloc(1_000, 7));
    expect(got.headers["content-type"]).toBe("application/octet-stream");
  });

  it("refuses a body over maxBytes, or truncates it when asked", async () => {
    const err = await failure(media().download(local("/bytes?n=200000"), { maxBytes: 1_000 }));
    expect(err).toMatchObject({ kind: "too_large", retryable: false, message: expect.stringContaining("more than 1000 bytes") });
    const cut = await media().download(local("/bytes?n=200000"), { maxBytes: 1_000, overflow: "truncate" });
    expect(cut).toMatchObject({ truncated: true });
    expect(cut.bytes.length).toBe(1_000);
  });

  it("refuses private targets by default, by literal and by name", async () => {
    const strict = media({ ssrf: undefined });
    const byLiteral = await failure(strict.download(local("/bytes?n=1"), { maxBytes: 10 }));
    expect(byLiteral).toMatchObject({ kind: "ssrf", retryable: false, message: expect.stringMatching(/non-public address 127\.0\.0\.1/) });
    const byName = await failure(strict.download(named("/bytes?n=1"), { maxBytes: 10 }));
    expect(byName.message).toMatch(/refusing to fetch localhost: it resolves to the non-public address/);
    const encoded = await failure(strict.download(`http://[::ffff:127.0.0.1]:${upstream.port}/`, { maxBytes: 10 }));
    expect(encoded.message).toMatch(/ipv4-mapped of loopback 127\.0\.0\.1/);
  });

  it("follows redirects, checking every hop again", async () => {
    const got = await media().download(redirectTo(local("/bytes?n=3"), 301), { maxBytes: 10 });
    expect(got).toMatchObject({ status: 200, url: local("/bytes?n=3") });
    expect((await failure(media().download(redirectTo(named("/bytes?n=3")), { maxBytes: 10 }))).message).toMatch(/non-public address/);
    expect((await failure(media().download(redirectTo(`http://127.0.0.2:${upstream.port}/`), { maxBytes: 10 }))).message).toMatch(
      /non-public address 127\.0\.0\.2/,
    );
    expect((await failure(media().download(redirectTo("http://169.254.169.254/latest/meta-data/"), { maxBytes: 10 }))).message).toMatch(
      /non-public address 169\.254\.169\.254/,
    );
    expect((await failure(media().download(redirectTo("file:///etc/passwd"), { maxBytes: 10 }))).message).toMatch(/refusing a redirect to file:/);
  });

  it("stops after maxRedirects: an error, or the redirect itself when okStatus takes it", async () => {
    const err = await failure(media().download(local("/loop"), { maxBytes: 100 }));
    expect(err).toMatchObject({ kind: "status", status: 302, retryable: false });
    const answer = await media().download(local("/loop"), { maxBytes: 100, maxRedirects: 1, okStatus: () => true });
    expect(answer).toMatchObject({ status: 302, url: local("/loop") });
    expect(answer.bytes.toString()).toBe("looping");
  });

  it("sends the caller's headers only to the first origin, and default headers only to the base URL's", async () => {
    const c = media({ ssrf: { allowHosts: ["127.0.0.1", "localhost"] } });
    const same = await c.download(redirectTo(local("/echo")), { maxBytes: 10_000, headers: { "x-token": "t" } });
    expect(JSON.parse(same.bytes.toString()).headers["x-token"]).toBe("t");
    const cross = await c.download(redirectTo(named("/echo")), { maxBytes: 10_000, headers: { "x-token": "t" } });
    expect(JSON.parse(cross.bytes.toString()).headers["x-token"]).toBeUndefined();

    const api = createHttpClient({ name: "api", baseUrl: `${upstream.origin}/api`, headers: { authorization: "Bearer k" }, ssrf: { allowHosts: ["localhost"] } });
    clients.push(api);
    const own = await api.download("echo", { maxBytes: 10_000 });
    expect(JSON.parse(own.bytes.toString())).toMatchObject({ path: "/api/echo", headers: { authorization: "Bearer k" } });
    const foreign = await api.download(named("/echo"), { maxBytes: 10_000 });
    expect(JSON.parse(foreign.bytes.toString()).headers.authorization).toBeUndefined();
  });

  it("throws a status error with the body for a non-2xx answer", async () => {
    const err = await failure(media().download(local("/status?code=404"), { maxBytes: 100 }));
    expect(err).toMatchObject({ kind: "status", status: 404, retryable: false });
  });

  it("keeps one deadline over redirects and body, and stops on the caller's abort", async () => {
    const err = await failure(media().download(redirectTo(local("/silent")), { maxBytes: 100, timeoutMs: 150 }));
    expect(err).toMatchObject({ kind: "timeout", retryable: true, message: expect.stringContaining("no answer within 150 ms") });
    const controller = new AbortController();
    const reason = new Error("bridge stopping");
    const pending = media().download(local("/silent"), { maxBytes: 100, signal: controller.signal });
    setTimeout(() => controller.abort(reason), 20);
    await expect(pending).rejects.toBe(reason);
  });
});
