import { randomUUID } from "node:crypto";
import { GatewayError, type RunRecord } from "@gw/contracts";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { httpErrorResponse } from "../errors.js";
import type * as ChatBody from "./chat-body.js";
import { checkImageInput, resolveAgent, runParams } from "./conversation.js";
import type { OpenAiDeps } from "./deps.js";
import { openSse, writeSse } from "./sse.js";

type StartParams = ReturnType<typeof runParams>;

let chatBody: Promise<typeof ChatBody> | undefined;

/**
 * The body's reader, imported on the first request: its zod schemas (with params.ts's, which
 * it shares with the Responses API's) are about 300 of an edge's 1,750, which an edge nobody
 * calls `/v1` on would otherwise build at start and hold (docs/decisions.md, Runtime).
 */
function chatBodyReader(): Promise<typeof ChatBody> {
  chatBody ??= import("./chat-body.js");
  return chatBody;
}

/** The run's record as the answer it is: text, the client tool calls it stopped for, usage. */
export function recordAnswer(record: RunRecord) {
  const usage = record.usage ?? { inputTokens: 0, outputTokens: 0 };
  return {
    text: record.payloads?.[0]?.text ?? "",
    toolCalls: record.toolCalls ?? [],
    finishReason: record.finishReason ?? "stop",
    usage: {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
    },
  };
}

/** A failed run as the typed error it ended with. */
export function runError(record: RunRecord): GatewayError {
  return new GatewayError(record.error?.code ?? "INTERNAL", record.error?.message ?? "the run failed");
}

function toolCallsJson(calls: RunRecord["toolCalls"]) {
  return (calls ?? []).map((c, index) => ({ index, id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }));
}

/** SPEC §4.2 `POST /v1/chat/completions`: `model` names an agent, `user` scopes the session. */
export function registerChatCompletions(app: FastifyInstance, deps: OpenAiDeps): void {
  app.post("/chat/completions", async (request, reply) => {
    const { chatRequest } = await chatBodyReader();
    const { body, request: req } = chatRequest(request.body, (model) => resolveAgent(deps.agentIds, model));
    const head = { id: `chatcmpl_${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: body.model };
    checkImageInput(req, (agentId) => deps.textOnlyModel(agentId));
    const params = runParams(req, randomUUID());
    if (body.stream) return streamCompletion(request, reply, deps, { ...head, params, includeUsage: body.stream_options?.include_usage === true });
    const record = await deps.runs.run(params, {});
    if (record.state === "error") throw runError(record);
    const answer = recordAnswer(record);
    const toolCalls = toolCallsJson(record.toolCalls).map(({ index: _index, ...call }) => call);
    return {
      ...head,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            // OpenAI sends null content beside tool calls when the model said nothing.
            content: answer.text === "" && toolCalls.length ? null : answer.text,
            ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: answer.finishReason,
        },
      ],
      usage: answer.usage,
    };
  });
}

async function streamCompletion(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: OpenAiDeps,
  c: { id: string; created: number; model: string; params: StartParams; includeUsage: boolean },
): Promise<void> {
  openSse(reply);
  // With include_usage, every chunk but the last carries `usage: null`, as OpenAI's do.
  const usageField = c.includeUsage ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: c.id,
    object: "chat.completion.chunk",
    created: c.created,
    model: c.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...usageField,
  });
  writeSse(reply, chunk({ role: "assistant" }));
  // A text chunk's event is written around its text: JSON.stringify(chunk({ content: text })), made once.
  const textHead = `data: ${JSON.stringify(chunk({ content: "" })).split('"content":""')[0]}"content":`;
  const textTail = `},"finish_reason":null}]${c.includeUsage ? ',"usage":null' : ""}}\n\n`;
  let finished = false;
  let streamed = "";
  // A client that hangs up mid-stream no longer wants the answer: stop the run.
  reply.raw.on("close", () => {
    if (!finished) void deps.runs.abort(c.params.runId).catch(() => undefined);
  });
  try {
    const record = await deps.runs.run(c.params, {
      onEvent: (event) => {
        if (event.stream === "assistant" && typeof event.data.text === "string" && event.data.text !== "") {
          streamed += event.data.text;
          reply.raw.write(`${textHead}${JSON.stringify(event.data.text)}${textTail}`);
        }
      },
    });
    if (record.state === "error") {
      writeSse(reply, httpErrorResponse(runError(record), deps.logger, request.id).body);
      return;
    }
    const answer = recordAnswer(record);
    // A finish reason promises the whole answer: text the run recorded that no event brought
    // (events missed while the bus reconnected) goes out first.
    if (answer.text.startsWith(streamed) && answer.text.length > streamed.length)
      writeSse(reply, chunk({ content: answer.text.slice(streamed.length) }));
    if (answer.toolCalls.length) writeSse(reply, chunk({ tool_calls: toolCallsJson(record.toolCalls) }));
    writeSse(reply, chunk({}, answer.finishReason));
    if (c.includeUsage) writeSse(reply, { ...chunk({}), choices: [], usage: answer.usage });
  } catch (err) {
    // The status line has gone out already: the error travels as the stream's last chunk.
    writeSse(reply, httpErrorResponse(err, deps.logger, request.id).body);
  } finally {
    finished = true;
    writeSse(reply, "[DONE]");
    reply.raw.end();
  }
}
