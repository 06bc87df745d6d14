import type { ChannelPlugin, CommonChannelSettings, PluginAccount } from "@gw/channels";
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

/** What delivery hands every plugin besides the account's settings. */
export interface DeliveryHost {
  /** The outbound HTTP client factory (libs/http-client). */
  http: HttpClientFactory;
  /** `delivery.media`; absent (a plugin's own tests): DEFAULT_MEDIA_LIMITS. */
  media?: MediaLimits;
}

/** What a plugin's `create` gets to build one account's adapter. */
export type PluginContext<Settings = CommonChannelSettings> = PluginAccount<Settings, DeliveryHost>;

/** A platform plugin as delivery runs it (`definePlugin` in @gw/channels, in the plugin's folder). */
export type DeliveryPlugin = ChannelPlugin<DeliveryHost>;
