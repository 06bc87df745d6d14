/**
 * A channel plugin is one definition in its platform's folder: its kind, the settings its
 * accounts take, the platform's published rate limits, where its webhooks arrive, and how one
 * account's adapter is made. Delivery reads everything it needs about a platform from here, so
 * adding a platform touches nothing outside the plugin's folder but the list of plugins.
 */
import type { z } from "zod";
import type { ChannelAdapter } from "./channel-adapter.js";
import type { CommonChannelSettings } from "./channel-settings.js";
import type { RateRule } from "./rate-rules.js";

/**
 * One account of one configured channel, as `create` receives it: the account's settings,
 * already validated by the plugin's schema, and what the composition root hands every plugin
 * (`Host`: delivery's outbound HTTP client factory and media limits).
 */
export type PluginAccount<Settings, Host extends object> = {
  channelId: string;
  accountId: string;
  settings: Settings;
} & Host;

export interface ChannelPlugin<Host extends object = object, Settings extends CommonChannelSettings = CommonChannelSettings> {
  /** The `kind` of `channels.<id>` this plugin serves. */
  readonly kind: string;
  /** How people name the platform ("Slack"), in messages. */
  readonly title: string;
  /** Strict: the common keys (COMMON_SETTINGS) and the platform's own. */
  readonly settings: z.ZodType<Settings>;
  /** The platform's published send limits (rate-rules.ts); empty when it publishes none. */
  readonly rates: readonly RateRule[];
  /**
   * The platform posts every account's events to one app-wide route whose path names no
   * channel (the edge's `/api/chatapp/events`): such a request is offered to this kind's
   * accounts that take webhooks, one after another, until one verifies it.
   */
  readonly sharedWebhookRoute?: boolean;
  create(account: PluginAccount<Settings, Host>): ChannelAdapter;
}

/**
 * A plugin definition, its settings type taken from its schema. `create`'s parameter names
 * the host, e.g. `create: ({ settings, http }: PluginContext<TelegramSettings>) => ...`.
 */
export function definePlugin<Host extends object, Settings extends CommonChannelSettings>(
  plugin: ChannelPlugin<Host, Settings>,
): ChannelPlugin<Host, Settings> {
  if (!/^[a-z][a-z0-9-]*$/.test(plugin.kind)) throw new Error(`a channel plugin's kind is lowercase letters, digits and '-', got "${plugin.kind}"`);
  return Object.freeze({ ...plugin, rates: Object.freeze([...plugin.rates]) });
}
