import type { ConfigSection } from "@gw/config";

/**
 * The config sections the agent runner reads (startHost's `reads`): `models` for the provider
 * keys, but not `channels`, since its message tool reaches a channel through delivery.
 */
export const RUNNER_CONFIG_READS: readonly ConfigSection[] = ["gateway", "agents", "models", "runner", "delivery", "nats", "redis", "ops"];
