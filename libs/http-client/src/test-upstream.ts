import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A local upstream for the client's tests (127.0.0.1, port 0), one behaviour per path. */
export interface TestUpstream {
  port: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** TCP connections accepted so far, to see keep-alive at work. */
  connections(): number;
  close(): Promise<void>;
}

type Route = (req: IncomingMessage, res: ServerResponse, body: Buffer, url: URL) => void;

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(value));

const ROUTES: Record<string, Route> = {
  "/echo": (req, res, body, url) =>
    json(res, 200, { method: req.method, path: url.pathname, query: url.search, headers: req.headers, body: body.toString("utf8") }),
  "/status": (req, res, _body, url) => {
    const headers: Record<string, string> = {};
    const retryAfter = url.searchParams.get("retryAfter");
    if (retryAfter !== null) headers["retry-after"] = retryAfter;
    json(res, Number(url.searchParams.get("code")), { error: { message: `refused ${String(req.headers.authorization)}` } }, headers);
  },
  "/telegram-429": (_req, res) =>
    json(res, 429, { ok: false, error_code: 429, description: "Too Many Requests: retry after 7", parameters: { retry_after: 7 } }),
  "/huge-error": (_req, res) => res.writeHead(500, { "content-type": "text/plain" }).end("e".repeat(100_000)),
  "/text": (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("not json"),
  "/empty": (_req, res) => res.writeHead(204).end(),
  "/bytes": (_req, res, _body, url) => res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.alloc(Number(url.searchParams.get("n")), 7)),
  "/large-json": (_req, res) => json(res, 200, { items: "y".repeat(10_000) }),
  "/silent": (_req, res) => res.flushHeaders(),
  "/no-headers": () => undefined,
  "/drip": (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: first\n\n");
  },
  "/sse": (_req, res, _body, url) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("event: one\ndata: 1\n\nevent: two\ndata: 2\n\n");
    // The rest arrives a little later, after a reader that stops at "two" has left.
    setTimeout(() => res.end("data: [DONE]\n\n"), Number(url.searchParams.get("tailMs") ?? 20));
  },
  "/redirect": (_req, res, _body, url) => res.writeHead(Number(url.searchParams.get("code") ?? 302), { location: url.searchParams.get("to") ?? "/" }).end(),
  "/loop": (_req, res) => res.writeHead(302, { location: "/loop" }).end("looping"),
};

export async function startTestUpstream(): Promise<TestUpstream> {
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://upstream.test");
      const route = ROUTES[url.pathname.replace(/^\/(api|bot[^/]*)(?=\/)/, "")];
      if (route) route(req, res, Buffer.concat(chunks), url);
      else res.writeHead(404).end("missing");
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
