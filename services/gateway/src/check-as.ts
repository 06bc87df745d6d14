import { RUNNER_CONFIG_READS } from "@gw/agent-runner";
import type { ConfigReader, ConfigSection } from "@gw/config";
import { DELIVERY_CONFIG_READS } from "@gw/delivery";
import { EDGE_CONFIG_READS } from "@gw/edge";
import { HOOKS_CONFIG_READS } from "@gw/hooks";
import { SESSIONS_CONFIG_READS } from "@gw/sessions";

/** The sections each distributed service reads: the lists their main.ts files give startHost. */
export const SERVICE_READS: Readonly<Record<string, readonly ConfigSection[]>> = {
  edge: EDGE_CONFIG_READS,
  sessions: SESSIONS_CONFIG_READS,
  "agent-runner": RUNNER_CONFIG_READS,
  delivery: DELIVERY_CONFIG_READS,
  hooks: HOOKS_CONFIG_READS,
};

/**
 * `config check|print --as <service>`: the config is then loaded as that service loads it,
 * needing only the variables of the sections it reads. Undefined for a name that is not a
 * distributed service.
 */
export function serviceReader(service: string): ConfigReader | undefined {
  const sections = Object.hasOwn(SERVICE_READS, service) ? SERVICE_READS[service] : undefined;
  return sections === undefined ? undefined : { service, sections };
}

/** Whether the config as `reader` loads it has this section's values (all of them without a reader). */
export function readsSection(reader: ConfigReader | undefined, section: ConfigSection): boolean {
  return reader === undefined || reader.sections.includes(section);
}
