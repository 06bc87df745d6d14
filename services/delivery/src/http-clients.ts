import { createHttpClient, type HttpClient, type SsrfPolicy } from "@gw/http-client";
import type { HttpClientFactory } from "./channels/registry.js";

/**
 * Every account's HTTP client, made through one factory so shutdown can close them all, and so
 * every client scrubs every configured secret (an error about one account must not show
 * another's token either).
 */
export class HttpClients {
  private readonly clients: HttpClient[] = [];

  constructor(private readonly secrets: readonly string[] = []) {}

  readonly factory: HttpClientFactory = (opts) => {
    const client = createHttpClient({ ...opts, secrets: [...(opts.secrets ?? []), ...this.secrets] });
    this.clients.push(client);
    return client;
  };

  async close(): Promise<void> {
    await Promise.allSettled(this.clients.splice(0).map((client) => client.close()));
  }
}

/**
 * A factory whose clients fetch media (bridges that upload the bytes) from exactly the hosts a
 * send's media URLs were checked against (`delivery.media`), unless a client names its own policy.
 */
export function withMediaPolicy(factory: HttpClientFactory, ssrf: SsrfPolicy): HttpClientFactory {
  return (opts) => factory({ ssrf, ...opts });
}
