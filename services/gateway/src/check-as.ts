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
 * Takes `--as <service>` (or `--as=<service>`) out of `config check`'s arguments: the config is
 * then loaded as that service loads it, needing only the variables of the sections it reads.
 */
export function takeCheckAs(argv: string[]): { reader?: ConfigReader; rest: string[] } {
  const at = argv.findIndex((arg) => arg === "--as" || arg.startsWith("--as="));
  if (at < 0) return { rest: argv };
  const arg = argv[at]!;
  const inline = arg.startsWith("--as=");
  const service = inline ? arg.slice("--as=".length) : argv[at + 1];
  const sections = service === undefined ? undefined : SERVICE_READS[service];
  if (service === undefined || sections === undefined) {
    throw new Error(`--as must name a distributed service (${Object.keys(SERVICE_READS).join(", ")}), got "${service ?? ""}"`);
  }
  return { reader: { service, sections }, rest: [...argv.slice(0, at), ...argv.slice(at + (inline ? 1 : 2))] };
}

/** Whether the config as `reader` loads it has this section's values (all of them without a reader). */
export function readsSection(reader: ConfigReader | undefined, section: ConfigSection): boolean {
  return reader === undefined || reader.sections.includes(section);
}
