import type { GatewayConfig } from "@gw/config";
import { GatewayError } from "@gw/contracts";

/** The configured agents, as far as sessions need them: which exist, and each one's model. */
export class AgentCatalog {
  private readonly models: Map<string, string>;
  readonly defaultId: string;

  constructor(agents: GatewayConfig["agents"]) {
    this.models = new Map(agents.list.map((a) => [a.id, a.model]));
    this.defaultId = agents.default ?? agents.list[0]!.id;
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
