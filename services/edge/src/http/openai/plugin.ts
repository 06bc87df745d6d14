import { GatewayError } from "@gw/contracts";
import type { FastifyInstance } from "fastify";
import { REQUEST_ID_HEADER, sendHttpError } from "../errors.js";
import { bearerAuth } from "../../auth/bearer-auth.js";
import { registerChatCompletions } from "./chat-completions.js";
import type { OpenAiDeps } from "./deps.js";
import { registerModels } from "./models.js";
import { registerResponses } from "./responses.js";

/**
 * The OpenAI-compatible surface under `/v1` (DESIGN §9): chat completions, the Responses API
 * and models, each on an agent run. Every answer names its request id (`x-request-id`), under
 * which the logs hold what a generic error message leaves out; every route needs a credential,
 * and an unknown `/v1/*` path is an OpenAI-shaped 404.
 */
export async function openaiSurface(app: FastifyInstance, deps: OpenAiDeps): Promise<void> {
  app.addHook("onRequest", async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
  app.addHook("onRequest", bearerAuth(deps));
  registerModels(app, deps);
  registerChatCompletions(app, deps);
  registerResponses(app, deps);
  app.setNotFoundHandler((request, reply) =>
    sendHttpError(reply, new GatewayError("NOT_FOUND", `unknown endpoint: ${request.method} ${request.url.split("?")[0]}`), deps.logger),
  );
}
