import type { ConfigSection } from "@gw/config";

/**
 * The config sections the edge reads (startHost's `reads`). Not `models` or `channels`: channel
 * webhooks reach delivery raw, by the channel id in their path, so no provider key or platform
 * secret is ever substituted here (DESIGN §9).
 */
export const EDGE_CONFIG_READS: readonly ConfigSection[] = ["gateway", "hooks", "agents", "runner", "delivery", "nats", "redis", "ops"];
