import { GatewayError } from "@gw/contracts";
import type { FastifyInstance } from "fastify";
import { agentIdOfModel } from "./conversation.js";
import type { OpenAiDeps } from "./deps.js";

/** An agent as an OpenAI model object. Agents have no creation date: `created` is 0. */
function model(id: string) {
  return { id, object: "model" as const, created: 0, owned_by: "agent-gateway" };
}

/**
 * `GET /v1/models` and `GET /v1/models/{id}`: OpenAI-compatible tools discover models there
 * before they call `/v1/chat/completions`, whose `model` names an agent. The agents come from
 * the config file every service reads, so answering costs no bus round trip.
 */
export function registerModels(app: FastifyInstance, deps: OpenAiDeps): void {
  app.get("/models", async () => ({ object: "list", data: deps.agentIds.map(model) }));
  app.get<{ Params: { id: string } }>("/models/:id", async (request) => {
    const agentId = agentIdOfModel(request.params.id);
    if (!deps.agentIds.includes(agentId))
      throw new GatewayError("NOT_FOUND", `the model '${request.params.id}' does not exist: models are agent ids (${deps.agentIds.join(", ")})`, {
        details: { param: "model" },
      });
    return model(request.params.id);
  });
}
