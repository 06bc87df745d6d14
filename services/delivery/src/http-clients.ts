import { createHttpClient, type HttpClient } from "@gw/http-client";
import type { HttpClientFactory } from "./channels/registry.js";

/** Every account's HTTP client, made through one factory so shutdown can close them all. */
export class HttpClients {
  private readonly clients: HttpClient[] = [];

  readonly factory: HttpClientFactory = (opts) => {
    const client = createHttpClient(opts);
    this.clients.push(client);
    return client;
  };

  async close(): Promise<void> {
    await Promise.allSettled(this.clients.splice(0).map((client) => client.close()));
  }
}
