import { randomUUID } from "node:crypto";
import { describeIssues, GatewayError } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { RunClient } from "../runs/run-client.js";
import { agentIdOfModel, type ChatCompletionsBody, ChatCompletionsBodySchema, chatTurn } from "./chat-completions-body.js";
import { httpErrorResponse } from "./errors.js";
import { bearerAuth, type HttpDeps } from "./routes.js";

export interface ChatCompletionsDeps extends HttpDeps {
  runs: RunClient;
  logger: Logger;
  /** The configured agents' ids. */
  agentIds: readonly string[];
}

function parseBody(raw: unknown): ChatCompletionsBody {
  const parsed = ChatCompletionsBodySchema.safeParse(raw ?? {});
  if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "body"));
  return parsed.data;
}

/**
 * `model` -> agent id, from the agents of the config file every service reads: checking it
 * here costs no bus round trip per request (the runner still refuses an agent it lacks).
 */
function resolveAgent(deps: ChatCompletionsDeps, model: string): string {
  const agentId = agentIdOfModel(model);
  if (!deps.agentIds.includes(agentId))
    throw new GatewayError("INVALID_REQUEST", `unknown model "${model}": use an agent id (${deps.agentIds.join(", ")})`);
  return agentId;
}

function sse(reply: FastifyReply, data: unknown): void {
  reply.raw.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
}

/** SPEC §4.2 `POST /v1/chat/completions`: `model` names an agent, `user` scopes the session. */
export function registerChatCompletions(app: FastifyInstance, deps: ChatCompletionsDeps): void {
  app.post("/v1/chat/completions", { onRequest: bearerAuth(deps) }, async (request, reply) => {
    const body = parseBody(request.body);
    const agentId = resolveAgent(deps, body.model);
    const { history, ...turn } = chatTurn(body);
    const id = `chatcmpl_${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const runId = randomUUID();
    const params = {
      ...turn,
      runId,
      agentId,
      // With `user`, the session `openai:<user>` holds the conversation. Without it the request
      // is stateless, like the OpenAI API: its messages are the whole history, and no session
      // is created (docs/decisions.md).
      sessionKey: `openai:${body.user ?? `ephemeral-${runId}`}`,
      sender: body.user ?? "openai",
      ...(body.user === undefined ? { ephemeralHistory: history } : {}),
    };
    if (!body.stream) {
      const record = await deps.runs.run(params, {});
      if (record.state === "error") throw new GatewayError(record.error?.code ?? "INTERNAL", record.error?.message);
      const content = record.payloads?.[0]?.text ?? "";
      return {
        id,
        object: "chat.completion",
        created,
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      };
    }
    await streamCompletion(reply, deps, { id, created, model: body.model, params });
  });
}

async function streamCompletion(
  reply: FastifyReply,
  deps: ChatCompletionsDeps,
  c: { id: string; created: number; model: string; params: Parameters<RunClient["run"]>[0] & { runId: string } },
): Promise<void> {
  reply.hijack();
  reply.raw.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: c.id,
    object: "chat.completion.chunk",
    created: c.created,
    model: c.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  sse(reply, chunk({ role: "assistant" }));
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
          sse(reply, chunk({ content: event.data.text }));
        }
      },
    });
    if (record.state === "error") {
      const failure = new GatewayError(record.error?.code ?? "INTERNAL", record.error?.message ?? "the run failed");
      sse(reply, httpErrorResponse(failure, deps.logger).body);
    } else {
      // `stop` promises the whole answer: text the run recorded that no event brought (events
      // missed while the bus reconnected) goes out first.
      const text = record.payloads?.[0]?.text ?? "";
      if (text.startsWith(streamed) && text.length > streamed.length) sse(reply, chunk({ content: text.slice(streamed.length) }));
      sse(reply, chunk({}, "stop"));
    }
  } catch (err) {
    // The status line has gone out already: the error travels as the stream's last chunk.
    sse(reply, httpErrorResponse(err, deps.logger).body);
  } finally {
    finished = true;
    sse(reply, "[DONE]");
    reply.raw.end();
  }
}
