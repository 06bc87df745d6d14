import type { ChannelAdapter, ChannelPluginConfig } from "@gw/channels";
import type { HttpClient, HttpClientOptions } from "@gw/http-client";

/**
 * Makes the outbound HTTP client of one account (its base URL, credentials, secrets to scrub):
 * delivery owns every client, closes them at shutdown, and sets the SSRF policy for media.
 */
export type HttpClientFactory = (opts: HttpClientOptions) => HttpClient;

/** A platform plugin: its kind (the `kind` of `channels.<id>`) and how to make an account's adapter. */
export interface ChannelPlugin {
  readonly kind: string;
  create(config: ChannelPluginConfig<Record<string, unknown>, HttpClientFactory>): ChannelAdapter;
}

/** kind -> plugin. The composition root passes the real table; tests pass their own. */
export type PluginTable = ReadonlyMap<string, ChannelPlugin>;

export function pluginTable(plugins: readonly ChannelPlugin[]): PluginTable {
  const table = new Map<string, ChannelPlugin>();
  for (const plugin of plugins) {
    if (table.has(plugin.kind)) throw new Error(`two channel plugins for kind ${plugin.kind}`);
    table.set(plugin.kind, plugin);
  }
  return table;
}
