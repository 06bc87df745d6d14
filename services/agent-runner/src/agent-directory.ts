import type { GatewayConfig } from "@gw/config";
import { type AgentIdentity, type AgentSummary, GatewayError } from "@gw/contracts";

export type AgentConfig = GatewayConfig["agents"]["list"][number];

/** The configured agents, looked up by id; the default agent answers for an empty id. */
export class AgentDirectory {
  private readonly byId: ReadonlyMap<string, AgentConfig>;

  constructor(private readonly agents: GatewayConfig["agents"]) {
    this.byId = new Map(agents.list.map((agent) => [agent.id, agent]));
  }

  get defaultId(): string {
    return this.agents.default;
  }

  list(): AgentSummary[] {
    return this.agents.list.map((a) => ({
      id: a.id,
      name: a.name,
      model: a.model,
      description: a.description,
    }));
  }

  /** The agent configured under `agentId`, if any ("" finds none). */
  find(agentId: string): AgentConfig | undefined {
    return this.byId.get(agentId);
  }

  get(agentId: string): AgentConfig {
    const id = agentId === "" ? this.agents.default : agentId;
    const agent = this.byId.get(id);
    if (agent === undefined) throw new GatewayError("NOT_FOUND", `unknown agent: ${id}`);
    return agent;
  }

  identity(agentId: string): AgentIdentity {
    const a = this.get(agentId);
    return { id: a.id, name: a.name, avatar: a.avatar, description: a.description };
  }
}
