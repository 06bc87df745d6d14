import type { ConfigSection } from "@gw/config";

/** The config sections delivery reads (startHost's `reads`): the only one with `channels`, the platform secrets. */
export const DELIVERY_CONFIG_READS: readonly ConfigSection[] = ["gateway", "agents", "channels", "bindings", "delivery", "runner", "nats", "redis", "ops"];
