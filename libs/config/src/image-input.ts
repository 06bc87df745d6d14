import { splitModelChain } from "./model-ref.js";
import type { GatewayConfig } from "./schema.js";
import { modelTakesImages } from "./schema-models.js";

/**
 * The first model of an agent's chain that takes no image input (`models.providers.<id>.input`),
 * or undefined when every one does: a request's own `model` if it names one, else the agent's
 * ("" names the default agent). What the edge refuses and delivery does not download for; the
 * runner checks again against the model a run calls (a session's own model is known only there).
 */
export function textOnlyModelOf(config: Pick<GatewayConfig, "agents" | "models">, agentId: string, model?: string): string | undefined {
  const agent = config.agents.list.find((a) => a.id === (agentId || config.agents.default));
  const chain = splitModelChain(model ?? agent?.model ?? "") ?? [];
  const textOnly = chain.find((ref) => !modelTakesImages(config.models.providers, ref));
  return textOnly === undefined ? undefined : `${textOnly.provider}/${textOnly.model}`;
}
