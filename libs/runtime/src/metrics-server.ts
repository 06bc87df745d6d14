import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  port: number;
  /** The address to listen on (ops.bind, or the process's own bind address). */
  host: string;
  registry: Registry;
}

/** Serves GET /metrics in the Prometheus text format; everything else is 404. */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    opts.registry.metrics().then(
      (body) =>
        res
          .writeHead(200, { "content-type": opts.registry.contentType })
          .end(req.method === "HEAD" ? "" : body),
      (err: unknown) =>
        res.writeHead(500, { "content-type": "text/plain" }).end(`collecting metrics failed: ${err}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Scrapers keep connections alive; do not let them hold up shutdown.
        server.closeAllConnections();
      }),
  };
}
