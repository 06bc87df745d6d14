import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { isGatewayError } from "@gw/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpFetchConfig, httpFetchTool } from "./http-fetch.js";
import type { ToolResult } from "./tool-registry.js";

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? "/";
    if (path === "/big") res.end("x".repeat(5_000));
    else if (path === "/small") res.writeHead(200, { "content-type": "text/plain" }).end("hello");
    else if (path === "/silent") res.flushHeaders(); // headers, then nothing
    else if (path.startsWith("/to/")) res.writeHead(302, { location: decodeURIComponent(path.slice(4)) }).end();
    else if (path === "/loop") res.writeHead(302, { location: "/loop" }).end();
    else res.writeHead(404).end("missing");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const config = (over: Partial<HttpFetchConfig> = {}): HttpFetchConfig => ({
  allowHosts: ["127.0.0.1"],
  allowPrivateNetworks: false,
  maxBytes: 1_000,
  timeoutMs: 2_000,
  ...over,
});
const ctx = (signal = new AbortController().signal) => ({ signal, agentId: "main", sessionKey: "s" });
const local = (path: string) => `http://127.0.0.1:${port}${path}`;
const redirectTo = (target: string) => local(`/to/${encodeURIComponent(target)}`);

function fetchWith(cfg: HttpFetchConfig, url: string, signal?: AbortSignal): Promise<ToolResult> {
  return httpFetchTool(cfg).run({ url }, ctx(signal));
}

async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isGatewayError(err)) throw new Error(`expected a GatewayError, got ${String(err)}`);
  return { code: err.code, message: err.message };
}

describe("http.fetch", () => {
  it("fetches an allowed local host", async () => {
    expect(await fetchWith(config(), local("/small"))).toEqual({
      content: "hello",
      status: 200,
      contentType: "text/plain",
      url: local("/small"),
      truncated: false,
    });
  });

  it("refuses private targets that are not allowed, by IP literal and by name", async () => {
    const byLiteral = await refusal(fetchWith(config({ allowHosts: [] }), local("/small")));
    expect(byLiteral).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/non-public address 127\.0\.0\.1/) });
    const byName = await refusal(fetchWith(config({ allowHosts: [] }), `http://localhost:${port}/small`));
    expect(byName).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringMatching(/non-public address/) });
  });

  it("caps the body at maxBytes and marks it truncated", async () => {
    const result = await fetchWith(config(), local("/big"));
    expect(result.content).toHaveLength(1_000);
    expect(result.truncated).toBe(true);
  });

  it("gives up after timeoutMs with INVALID_REQUEST", async () => {
    const err = await refusal(fetchWith(config({ timeoutMs: 150 }), local("/silent")));
    expect(err).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining("no answer within 150 ms") });
  });

  it("stops when the run is aborted", async () => {
    const controller = new AbortController();
    const pending = fetchWith(config(), local("/silent"), controller.signal);
    controller.abort();
    expect((await refusal(pending)).code).toBe("INVALID_REQUEST");
  });

  it("follows a redirect to an allowed target", async () => {
    const result = await fetchWith(config(), redirectTo(local("/small")));
    expect(result).toMatchObject({ status: 200, content: "hello", url: local("/small") });
  });

  it("re-checks every redirect: a hop to a private address that is not allowed is refused", async () => {
    const toName = await refusal(fetchWith(config(), redirectTo(`http://localhost:${port}/small`)));
    expect(toName.message).toMatch(/non-public address/);
    const toOtherLiteral = await refusal(fetchWith(config(), redirectTo(`http://127.0.0.2:${port}/small`)));
    expect(toOtherLiteral.message).toMatch(/non-public address 127\.0\.0\.2/);
    const toMetadata = await refusal(fetchWith(config(), redirectTo("http://169.254.169.254/latest/meta-data/")));
    expect(toMetadata.message).toMatch(/non-public address 169\.254\.169\.254/);
  });

  it("refuses a redirect to a non-http scheme", async () => {
    const err = await refusal(fetchWith(config(), redirectTo("file:///etc/passwd")));
    expect(err.message).toMatch(/refusing a redirect to file:/);
  });

  it("follows at most 3 redirects, then returns the redirect itself", async () => {
    const result = await fetchWith(config(), local("/loop"));
    expect(result).toMatchObject({ status: 302, url: local("/loop") });
  });
});
