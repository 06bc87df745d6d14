import { randomUUID } from "node:crypto";
import { GatewayError } from "@gw/contracts";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { httpErrorResponse } from "../errors.js";
import { runError } from "./chat-completions.js";
import { checkImageInput, resolveAgent, runParams } from "./conversation.js";
import type { OpenAiDeps } from "./deps.js";
import { finalStatus, itemId, outputItems, type ResponseHead, responseObject } from "./response-object.js";
import { ResponseStream } from "./responses-stream.js";
import type * as ResponsesBodyModule from "./responses-body.js";
import type { ResponsesBody } from "./responses-body.js";
import { openSse } from "./sse.js";

let responsesBody: Promise<typeof ResponsesBodyModule> | undefined;

/** The body's reader and its schemas, imported on the first request as chat completions' is. */
function responsesBodyReader(): Promise<typeof ResponsesBodyModule> {
  responsesBody ??= import("./responses-body.js");
  return responsesBody;
}

/**
 * The session a stored response's conversation lives in: a new one for `store: true`, the
 * previous response's to continue it. Only a conversation's latest response can be continued:
 * a session has one line of history, so an older one would need a fork the gateway does not make.
 */
async function storedSession(deps: OpenAiDeps, body: ResponsesBody, head: ResponseHead, agentId: string): Promise<string | undefined> {
  const previousId = body.previous_response_id;
  if (previousId === undefined) return body.store === true ? `responses:${head.id}` : undefined;
  const previous = await deps.responses.get(previousId, "previous_response_id");
  if (previous.agentId !== agentId)
    throw new GatewayError("INVALID_REQUEST", `body.model: ${previousId} was answered by agent ${previous.agentId}`, { details: { param: "model" } });
  const latest = await deps.responses.latest(previous.sessionKey);
  if (latest !== previousId)
    throw new GatewayError("CONFLICT", `body.previous_response_id: ${latest ?? "a later response"} already continues ${previousId}; continue from it`, {
      details: { param: "previous_response_id" },
    });
  return previous.sessionKey;
}

/**
 * `POST /v1/responses` (the OpenAI Responses API) on the same agent run as chat completions:
 * `input` is the conversation, `instructions` the extra system prompt, function `tools` the
 * client's tools; with `stream: true` the typed `response.*` events. With `store: true` (or a
 * `previous_response_id`) the exchange is kept in a session and `GET`/`DELETE
 * /v1/responses/{id}` read and forget it.
 */
export function registerResponses(app: FastifyInstance, deps: OpenAiDeps): void {
  app.post("/responses", async (request, reply) => {
    const { responsesRequest } = await responsesBodyReader();
    const { body, request: req } = responsesRequest(request.body, (model) => resolveAgent(deps.agentIds, model));
    const head: ResponseHead = { id: itemId("resp"), createdAt: Math.floor(Date.now() / 1000), body };
    const session = await storedSession(deps, body, head, req.agentId);
    // Continuing a stored conversation stores the continuation too, unless store: false says not.
    head.stored = session !== undefined && body.store !== false;
    checkImageInput(req, (agentId) => deps.textOnlyModel(agentId));
    const params = runParams(req, randomUUID(), session);
    const keep = async (response: Record<string, unknown>) => {
      if (head.stored && session !== undefined) await deps.responses.save(head.id, { sessionKey: session, agentId: req.agentId, response });
    };
    if (body.stream) return streamResponse(request, reply, deps, head, params, keep);
    const record = await deps.runs.run(params, {});
    if (record.state === "error") throw runError(record);
    const response = responseObject(head, finalStatus(record), outputItems(record), { record });
    await keep(response);
    return response;
  });
  app.get<{ Params: { id: string } }>("/responses/:id", async (request) => (await deps.responses.get(request.params.id)).response);
  app.delete<{ Params: { id: string } }>("/responses/:id", async (request) => {
    await deps.responses.delete(request.params.id);
    return { id: request.params.id, object: "response", deleted: true };
  });
}

async function streamResponse(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: OpenAiDeps,
  head: ResponseHead,
  params: ReturnType<typeof runParams>,
  keep: (response: Record<string, unknown>) => Promise<void>,
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
    else await keep(stream.finish(record));
  } catch (err) {
    stream.fail(httpErrorResponse(err, deps.logger, request.id).body.error);
  } finally {
    finished = true;
    reply.raw.end();
  }
}
