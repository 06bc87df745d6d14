import { createHttpClient, type HttpClient, type SsrfPolicy } from "@gw/http-client";
import type { HttpClientFactory } from "./channels/registry.js";

/**
 * Every account's HTTP client, made through one factory so shutdown can close them all, and so
 * every client scrubs every configured secret (an error about one account must not show
 * another's token either).
 */
export class HttpClients {
  private readonly clients: HttpClient[] = [];

  /**
   * `media` is the SSRF policy for URLs outside a client's base URL (media a bridge downloads):
   * delivery.media.allowHosts / allowPrivateNetworks.
   */
  constructor(
    private readonly secrets: readonly string[] = [],
    private readonly media?: SsrfPolicy,
  ) {}

  readonly factory: HttpClientFactory = (opts) => {
    const client = createHttpClient({
      ...opts,
      secrets: [...(opts.secrets ?? []), ...this.secrets],
      ...(this.media === undefined ? {} : { ssrf: this.media }),
    });
    this.clients.push(client);
    return client;
  };

  async close(): Promise<void> {
    await Promise.allSettled(this.clients.splice(0).map((client) => client.close()));
  }
}
