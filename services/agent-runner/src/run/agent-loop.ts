import { GatewayError, isGatewayError, type RunUsage } from "@gw/contracts";
import type {
  ChatMessage,
  ModelProvider,
  Sampling,
  StopReason,
  Thinking,
  ToolCall,
  ToolChoice,
  ToolSpec,
} from "../providers/model-provider.js";
import type { ToolContext, ToolRegistry } from "../tools/tool-registry.js";
import { pairToolTurns } from "./conversation.js";
import type { InboxReader } from "./inbox-reader.js";
import type { RunEventPublisher } from "./run-event-publisher.js";

export interface LoopInput {
  provider: ModelProvider;
  model: string;
  system: string;
  history: ChatMessage[];
  /** What the run adds first: the user message, or the client's tool results (with the call). */
  turn: ChatMessage[];
  thinking: Thinking | undefined;
  toolAllow: readonly string[];
  tools: ToolRegistry;
  /** The client's own function tools: offered to the model, run by the client. */
  clientTools?: ToolSpec[];
  /** Applies to the turn's first model call only: after an agent tool ran, the model decides. */
  toolChoice?: ToolChoice;
  sampling?: Sampling;
  maxToolRounds: number;
  events: RunEventPublisher;
  ctx: ToolContext;
  /** Settles once the run is confirmed as this runner's: tools wait for it. */
  confirmed?: Promise<unknown>;
  /** Messages handed to the run while it goes (steer), read before each model call. */
  inbox?: Pick<InboxReader, "next">;
}

export interface LoopResult {
  /** Every assistant text chunk of the run, concatenated (SPEC §6). */
  text: string;
  /** What this run adds to the session: the turn, then assistant and tool turns. */
  added: ChatMessage[];
  /** Calls to the client's tools the run stopped for (finishReason `tool_calls`). */
  clientCalls: ToolCall[];
  finishReason: StopReason;
  /** Summed over every model call. */
  usage: RunUsage;
}

async function runTool(input: LoopInput, call: ToolCall): Promise<ChatMessage> {
  const tool = input.tools.fromWire(call.name, input.toolAllow);
  const name = tool?.name ?? call.name;
  input.events.emit("tool", { phase: "start", name, toolCallId: call.id, input: call.input });
  try {
    if (tool === undefined) throw new GatewayError("INVALID_REQUEST", `tool ${name} is not available to this agent`);
    const result = await input.tools.run(tool, call.input, { ...input.ctx, toolCallId: call.id });
    input.events.emit("tool", { phase: "result", toolCallId: call.id, result });
    return { role: "tool", toolCallId: call.id, name, content: result.content };
  } catch (err) {
    if (input.ctx.signal.aborted) throw err;
    const message = isGatewayError(err) ? err.message : `tool ${name} failed`;
    input.events.emit("tool", { phase: "error", toolCallId: call.id, error: message });
    // The model sees the failure and may recover; the run goes on.
    return { role: "tool", toolCallId: call.id, name, content: `error: ${message}`, isError: true };
  }
}

interface ModelTurn {
  text: string;
  calls: ToolCall[];
  stop: StopReason | undefined;
}

async function modelTurn(input: LoopInput, added: ChatMessage[], round: number, usage: RunUsage, shown: { thinking: boolean }): Promise<ModelTurn> {
  const turn: ModelTurn = { text: "", calls: [], stop: undefined };
  const request = {
    model: input.model,
    system: input.system,
    messages: pairToolTurns([...input.history, ...added]),
    tools: [...input.tools.specs(input.toolAllow), ...(input.clientTools ?? [])],
    thinking: input.thinking,
    ...(round === 0 && input.toolChoice ? { toolChoice: input.toolChoice } : {}),
    ...(input.sampling ? { sampling: input.sampling } : {}),
  };
  for await (const chunk of input.provider.stream(request, input.ctx.signal)) {
    if (chunk.type === "text") {
      turn.text += chunk.text;
      input.events.emit("assistant", { type: "text", text: chunk.text });
    } else if (chunk.type === "thinking" && !shown.thinking) {
      shown.thinking = true;
      input.events.emit("lifecycle", { phase: "thinking" });
    } else if (chunk.type === "tool_call") turn.calls.push(chunk.call);
    else if (chunk.type === "usage") {
      usage.inputTokens += chunk.inputTokens;
      usage.outputTokens += chunk.outputTokens;
    } else if (chunk.type === "stop") turn.stop = chunk.reason;
  }
  return turn;
}

/**
 * Model turn, tool calls, results back to the model, until it answers without tools. A call to
 * one of the client's tools ends the loop once the agent's own calls of that round have run:
 * the client runs it and continues the turn with its result (a later run).
 */
export async function runAgentLoop(input: LoopInput): Promise<LoopResult> {
  const added: ChatMessage[] = [...input.turn];
  const clientNames = new Set((input.clientTools ?? []).map((t) => t.name));
  const usage: RunUsage = { inputTokens: 0, outputTokens: 0 };
  const shown = { thinking: input.thinking !== undefined };
  let text = "";
  for (let round = 0; round < input.maxToolRounds; round++) {
    const steered = await input.inbox?.next();
    if (steered !== undefined) added.push(steered);
    const turn = await modelTurn(input, added, round, usage, shown);
    text += turn.text;
    added.push({ role: "assistant", content: turn.text, ...(turn.calls.length ? { toolCalls: turn.calls } : {}) });
    if (turn.calls.length === 0) return { text, added, clientCalls: [], finishReason: turn.stop ?? "stop", usage };
    await input.confirmed;
    input.ctx.signal.throwIfAborted();
    const clientCalls = turn.calls.filter((call) => clientNames.has(call.name));
    for (const call of turn.calls) if (!clientNames.has(call.name)) added.push(await runTool(input, call));
    if (clientCalls.length > 0) return { text, added, clientCalls, finishReason: "tool_calls", usage };
  }
  throw new GatewayError("MODEL_ERROR", `the model still called tools after ${input.maxToolRounds} rounds`);
}
