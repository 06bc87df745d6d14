import type { ConfigSection } from "@gw/config";

/**
 * The config sections the hooks service reads (startHost's `reads`). Not `models`: it checks a
 * hook's model override against the provider names only, which stay in its view without the keys.
 */
export const HOOKS_CONFIG_READS: readonly ConfigSection[] = ["gateway", "hooks", "cron", "agents", "runner", "nats", "redis", "ops"];
