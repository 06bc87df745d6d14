import { BUILTIN_PROVIDER, type GatewayConfig } from "@gw/config";
import { GatewayError } from "@gw/contracts";

/**
 * The configured agents, as far as sessions need them: which exist, and each one's model; and
 * which model providers exist, so a session is never patched to a model no run can call.
 */
export class AgentCatalog {
  private readonly models: Map<string, string>;
  private readonly providers: ReadonlySet<string>;
  readonly defaultId: string;

  /**
   * `providers` is `models.providers`: sessions do not read the `models` section (its API keys
   * are none of theirs), but provider names stay in every service's view, only the values that
   * name a secret are withheld (libs/config's reader).
   */
  constructor(agents: GatewayConfig["agents"], providers: GatewayConfig["models"]["providers"]) {
    this.models = new Map(agents.list.map((a) => [a.id, a.model]));
    this.providers = new Set([BUILTIN_PROVIDER, ...Object.keys(providers)]);
    this.defaultId = agents.default ?? agents.list[0]!.id;
  }

  hasProvider(name: string): boolean {
    return this.providers.has(name);
  }

  /** The agent id to use ("" -> the default agent); NOT_FOUND for an agent nobody configured. */
  resolve(agentId: string): string {
    const id = agentId === "" ? this.defaultId : agentId;
    if (!this.models.has(id)) throw new GatewayError("NOT_FOUND", `unknown agent: ${id}`);
    return id;
  }

  modelOf(agentId: string): string {
    return this.models.get(agentId) ?? "";
  }
}
