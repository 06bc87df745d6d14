import type { ConfigSection } from "@gw/config";

/** The config sections the sessions service reads (startHost's `reads`); its session index is on Redis. */
export const SESSIONS_CONFIG_READS: readonly ConfigSection[] = ["gateway", "agents", "sessions", "nats", "redis", "ops"];
