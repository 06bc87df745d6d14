import { type GatewayConfig, textOnlyModelOf } from "@gw/config";
import { GatewayError } from "@gw/contracts";

/** An agent's first model without image input, given a request's own `model` (else the agent's). */
export type TextOnlyModel = (agentId: string, model?: string) => string | undefined;

/**
 * From the config every service reads: what the edge refuses before a run starts, so the
 * client's 400 names the image it sent (the runner checks again against the model it calls).
 */
export function textOnlyModels(config: Pick<GatewayConfig, "agents" | "models">): TextOnlyModel {
  return (agentId, model) => textOnlyModelOf(config, agentId, model);
}

/** The `agent` RPC's refusal: images to a model without image input, naming `attachments`. */
export function checkAttachments(textOnlyModel: TextOnlyModel, params: { agentId?: string; model?: string; attachments?: readonly unknown[] }): void {
  if (!params.attachments?.length) return;
  const model = textOnlyModel(params.agentId ?? "", params.model);
  if (model !== undefined)
    throw new GatewayError("INVALID_REQUEST", `attachments: model ${model} takes no image input`, { details: { param: "attachments" } });
}
