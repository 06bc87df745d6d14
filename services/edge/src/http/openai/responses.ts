import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { httpErrorResponse } from "../errors.js";
import { runError } from "./chat-completions.js";
import { resolveAgent, runParams } from "./conversation.js";
import type { OpenAiDeps } from "./deps.js";
import { finalStatus, itemId, outputItems, type ResponseHead, responseObject } from "./response-object.js";
import { ResponseStream } from "./responses-stream.js";
import { responsesRequest } from "./responses-body.js";
import { openSse } from "./sse.js";

/**
 * `POST /v1/responses` (the OpenAI Responses API) on the same agent run as chat completions:
 * `input` is the conversation, `instructions` the extra system prompt, function `tools` the
 * client's tools; with `stream: true` the typed `response.*` events.
 */
export function registerResponses(app: FastifyInstance, deps: OpenAiDeps): void {
  app.post("/responses", async (request, reply) => {
    const { body, request: req } = responsesRequest(request.body, (model) => resolveAgent(deps.agentIds, model));
    const head: ResponseHead = { id: itemId("resp"), createdAt: Math.floor(Date.now() / 1000), body };
    const params = runParams(req, randomUUID());
    if (body.stream) return streamResponse(request, reply, deps, head, params);
    const record = await deps.runs.run(params, {});
    if (record.state === "error") throw runError(record);
    return responseObject(head, finalStatus(record), outputItems(record), { record });
  });
}

async function streamResponse(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: OpenAiDeps,
  head: ResponseHead,
  params: ReturnType<typeof runParams>,
): Promise<void> {
  openSse(reply);
  const stream = new ResponseStream(reply, head);
  stream.start();
  let finished = false;
  // A client that hangs up mid-stream no longer wants the answer: stop the run.
  reply.raw.on("close", () => {
    if (!finished) void deps.runs.abort(params.runId).catch(() => undefined);
  });
  try {
    const record = await deps.runs.run(params, {
      onEvent: (event) => {
        if (event.stream === "assistant" && typeof event.data.text === "string" && event.data.text !== "") stream.text(event.data.text);
      },
    });
    if (record.state === "error") stream.fail(httpErrorResponse(runError(record), deps.logger, request.id).body.error);
    else stream.finish(record);
  } catch (err) {
    stream.fail(httpErrorResponse(err, deps.logger, request.id).body.error);
  } finally {
    finished = true;
    reply.raw.end();
  }
}
