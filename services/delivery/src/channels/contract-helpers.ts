/**
 * Test-only wiring for the plugins' contract and unit tests: an HttpClientFactory like the one
 * delivery builds (every client scrubs every account's secrets), which also lets clients fetch
 * from the loopback fake media server, as a deployment would allow its own media host.
 */
import type { RawInbound } from "@gw/channels";
import { createHttpClient, type HttpClient } from "@gw/http-client";
import type { HttpClientFactory } from "./registry.js";

export interface TestHttp {
  factory: HttpClientFactory;
  close(): Promise<void>;
}

export function testHttp(opts: { secrets: readonly string[]; mediaHosts?: readonly string[] }): TestHttp {
  const clients: HttpClient[] = [];
  const factory: HttpClientFactory = (client) => {
    const made = createHttpClient({
      ...client,
      secrets: [...(client.secrets ?? []), ...opts.secrets],
      ssrf: { allowHosts: [...(opts.mediaHosts ?? [])] },
    });
    clients.push(made);
    return made;
  };
  return {
    factory,
    close: async () => {
      await Promise.all(clients.splice(0).map((client) => client.close()));
    },
  };
}

/** A webhook request as the edge forwards it: lower-cased headers, the body's exact bytes. */
export function rawRequest(
  signed: { headers: Record<string, string>; body: string },
  opts: { method?: string; path?: string; query?: Record<string, string> } = {},
): RawInbound {
  return {
    method: opts.method ?? "POST",
    path: opts.path ?? "/webhook",
    query: opts.query ?? {},
    headers: Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), v])),
    body: Buffer.from(signed.body, "utf8"),
  };
}
