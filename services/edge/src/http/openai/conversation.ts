import {
  type ClientTool,
  fromRunAttachment,
  GatewayError,
  type ImageAttachment,
  type RunHistoryMessage,
  type SamplingParams,
  type ToolChoice,
} from "@gw/contracts";
import type { StartRun } from "../../runs/run-client.js";

/**
 * What a chat-completions or a Responses request asks of an agent run, whichever API it came
 * in through: both routes parse their body into this, and one function turns it into a run.
 */
export interface OpenAiRequest {
  /** As the client named it, echoed in answers. */
  model: string;
  agentId: string;
  /** `system`/`developer` messages and `instructions`, in order. */
  system: string[];
  /** Every other message, in order; `where` names it in the body for error messages. */
  messages: Array<RunHistoryMessage & { where: string }>;
  /** Where each image part is in the body (`messages[0].content[1]`): a model without image input is refused naming the first. */
  imageParams: string[];
  clientTools: ClientTool[];
  toolChoice: ToolChoice | undefined;
  sampling: SamplingParams;
  thinking: "low" | "medium" | "high" | undefined;
  /** Scopes the session `openai:<user>`; without it the request is stateless. */
  user: string | undefined;
}

export function message(role: string, content: string, extra: Partial<RunHistoryMessage> = {}): RunHistoryMessage {
  return { role, content, toolCalls: [], toolCallId: "", name: "", attachments: [], ...extra };
}

function invalid(message: string, param: string): GatewayError {
  return new GatewayError("INVALID_REQUEST", message, { details: { param } });
}

/** `messages[1]` as the gateway's validation messages name places: `body.messages.1`. */
function place(where: string): string {
  return `body.${where.replace(/\[(\d+)\]/g, ".$1")}`;
}

/**
 * Every tool result must answer a call of the assistant turn just before it: providers refuse
 * anything else, and a 400 naming the message is clearer than their error. Results get the
 * name of the tool they answer, which OpenAI's tool messages leave out.
 */
function checkToolResults(messages: OpenAiRequest["messages"], stored: boolean): void {
  let calls = new Map<string, string>();
  let leading = true;
  for (const m of messages) {
    if (m.role === "assistant") calls = new Map(m.toolCalls.map((c) => [c.id, c.name]));
    else if (m.role === "tool") {
      const name = calls.get(m.toolCallId);
      // A stored conversation holds the calls that the request's leading results answer.
      if (name === undefined && stored && leading) continue;
      if (name === undefined) throw invalid(`${place(m.where)}: no tool call ${m.toolCallId} in the assistant message before it`, m.where);
      m.name = name;
    } else calls = new Map();
    if (m.role !== "tool") leading = false;
  }
}

/** Splits the conversation into what came before and the turn the run takes. */
function splitTurn(req: OpenAiRequest): {
  history: RunHistoryMessage[];
  message: string;
  images?: ImageAttachment[];
  callTurn?: RunHistoryMessage;
  results: RunHistoryMessage[];
} {
  const all = req.messages;
  const last = all.at(-1);
  if (last === undefined) throw invalid("the conversation must end with a user message or tool results", "messages");
  if (last.role === "user") {
    if (last.content.trim() === "" && last.attachments.length === 0)
      throw invalid(`${place(last.where)}: the last user message has no text or image`, last.where);
    const images = last.attachments.map(fromRunAttachment).filter((image) => image !== undefined);
    return { history: all.slice(0, -1).map(plain), message: last.content, images, results: [] };
  }
  if (last.role !== "tool")
    throw invalid(`${place(last.where)}: the conversation must end with a user message or tool results`, last.where);
  let start = all.length;
  while (start > 0 && all[start - 1]!.role === "tool") start--;
  // checkToolResults has made sure an assistant turn with these calls comes just before, or
  // (a stored conversation) that the session holds them.
  if (start === 0) return { history: [], message: "", results: all.map(plain) };
  const callTurn = all[start - 1]!;
  return { history: all.slice(0, start - 1).map(plain), message: "", callTurn: plain(callTurn), results: all.slice(start).map(plain) };
}

function plain({ where: _where, ...m }: OpenAiRequest["messages"][number]): RunHistoryMessage {
  return m;
}

/**
 * The run an OpenAI-style request starts. Without `user` it is stateless, like the OpenAI API:
 * the request's messages are the whole history and no session is created. With `user`, the
 * session `openai:<user>` holds the conversation and only the request's turn is new: its last
 * user message, or the results of the client's tool calls (docs/decisions.md). A stored
 * response's conversation (`storedSession`) is held the same way, and there the request carries
 * nothing but the new turn.
 */
export function runParams(req: OpenAiRequest, runId: string, storedSession?: string): StartRun & { runId: string } {
  checkToolResults(req.messages, storedSession !== undefined);
  const turn = splitTurn(req);
  if (storedSession !== undefined && turn.history.length > 0)
    throw invalid("with store or previous_response_id, input holds only the new turn (a user message, or function_call_output items)", "input");
  const system = req.system.filter((s) => s.trim() !== "").join("\n\n");
  return {
    runId,
    agentId: req.agentId,
    message: turn.message,
    ...(turn.images?.length ? { attachments: turn.images } : {}),
    sessionKey: storedSession ?? `openai:${req.user ?? `ephemeral-${runId}`}`,
    sender: req.user ?? "openai",
    ...(system ? { extraSystemPrompt: system } : {}),
    ...(req.thinking ? { thinking: req.thinking } : {}),
    ...(req.user === undefined && storedSession === undefined ? { ephemeralHistory: turn.history } : {}),
    openai: {
      clientTools: req.clientTools,
      toolChoice: req.toolChoice,
      sampling: req.sampling,
      toolCallTurn: turn.callTurn,
      toolResults: turn.results,
    },
  };
}

/**
 * A request with images to an agent whose model reads none is refused naming the first image
 * part (`messages[0].content[1]`), never run without them. `textOnlyModel` answers the agent's
 * first model without image input (models.providers.<id>.input).
 */
export function checkImageInput(req: OpenAiRequest, textOnlyModel: (agentId: string) => string | undefined): void {
  const first = req.imageParams[0];
  if (first === undefined) return;
  const model = textOnlyModel(req.agentId);
  if (model !== undefined) throw invalid(`${place(first)}: model ${model} of agent ${req.agentId} takes no image input`, first);
}

/** `agent:<id>` or a bare agent id. */
export function agentIdOfModel(model: string): string {
  return model.startsWith("agent:") ? model.slice("agent:".length) : model;
}

/**
 * `model` -> agent id, from the agents of the config file every service reads: checking it
 * here costs no bus round trip per request (the runner still refuses an agent it lacks).
 */
export function resolveAgent(agentIds: readonly string[], model: string): string {
  const agentId = agentIdOfModel(model);
  if (!agentIds.includes(agentId))
    throw invalid(`unknown model "${model}": use an agent id (${agentIds.join(", ")})`, "model");
  return agentId;
}
