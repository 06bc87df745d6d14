import type { ChannelAdapter, ChannelKind, ChannelPluginConfig, ChannelSettings } from "@gw/channels";
import type { HttpClient, HttpClientOptions } from "@gw/http-client";

/**
 * Makes the outbound HTTP client of one account (its base URL, credentials, secrets to scrub):
 * delivery owns every client, closes them at shutdown, and makes each scrub every secret.
 */
export type HttpClientFactory = (opts: HttpClientOptions) => HttpClient;

/**
 * How much media a plugin that uploads bytes (a bridge such as signal-cli-rest-api or
 * BlueBubbles) may fetch for one attachment: `delivery.media` of the config.
 */
export interface MediaLimits {
  /** Largest attachment downloaded, in bytes; a larger one is refused. */
  maxBytes: number;
  /** Deadline of one download, in milliseconds. */
  timeoutMs: number;
}

/** The `delivery.media` defaults, for directories built without a config (tests). */
export const DEFAULT_MEDIA_LIMITS: Readonly<MediaLimits> = Object.freeze({ maxBytes: 26_214_400, timeoutMs: 20_000 });

/** What a plugin gets to build one account's adapter. */
export interface PluginContext<K extends ChannelKind = ChannelKind> extends ChannelPluginConfig<ChannelSettings<K>, HttpClientFactory> {
  /** `delivery.media`; absent (a plugin's own tests): DEFAULT_MEDIA_LIMITS. */
  media?: MediaLimits;
}

/**
 * A platform plugin: its kind (the `kind` of `channels.<id>`) and how to make one account's
 * adapter from that account's settings, already validated by the kind's schema
 * (`CHANNEL_SETTINGS_SCHEMAS` in @gw/channels).
 */
export interface ChannelPlugin<K extends ChannelKind = ChannelKind> {
  readonly kind: K;
  create(config: PluginContext<K>): ChannelAdapter;
}

export function definePlugin<K extends ChannelKind>(plugin: ChannelPlugin<K>): ChannelPlugin<K> {
  return plugin;
}

/** kind -> plugin. The composition root passes the real table; tests pass their own. */
export type PluginTable = ReadonlyMap<string, ChannelPlugin>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the table holds plugins of every kind
export function pluginTable(plugins: ReadonlyArray<ChannelPlugin<any>>): PluginTable {
  const table = new Map<string, ChannelPlugin>();
  for (const plugin of plugins) {
    if (table.has(plugin.kind)) throw new Error(`two channel plugins for kind ${plugin.kind}`);
    table.set(plugin.kind, plugin as ChannelPlugin);
  }
  return table;
}
