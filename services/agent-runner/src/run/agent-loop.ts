import { GatewayError, isGatewayError } from "@gw/contracts";
import type { ChatMessage, ModelProvider, Thinking, ToolCall } from "../providers/model-provider.js";
import type { ToolContext, ToolRegistry } from "../tools/tool-registry.js";
import type { RunEventPublisher } from "./run-event-publisher.js";

export interface LoopInput {
  provider: ModelProvider;
  model: string;
  system: string;
  history: ChatMessage[];
  message: string;
  thinking: Thinking | undefined;
  toolAllow: readonly string[];
  tools: ToolRegistry;
  maxToolRounds: number;
  events: RunEventPublisher;
  ctx: ToolContext;
  /** Settles once the run is confirmed as this runner's: tools wait for it. */
  confirmed?: Promise<unknown>;
}

export interface LoopResult {
  /** Every assistant text chunk of the run, concatenated (SPEC §6). */
  text: string;
  /** What this run adds to the session: the user message, then assistant and tool turns. */
  added: ChatMessage[];
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

/** Model turn, tool calls, results back to the model, until it answers without tools. */
export async function runAgentLoop(input: LoopInput): Promise<LoopResult> {
  const added: ChatMessage[] = [{ role: "user", content: input.message }];
  const specs = input.tools.specs(input.toolAllow);
  let text = "";
  let thinkingShown = input.thinking !== undefined;
  for (let round = 0; round < input.maxToolRounds; round++) {
    let turnText = "";
    const calls: ToolCall[] = [];
    const request = {
      model: input.model,
      system: input.system,
      messages: [...input.history, ...added],
      tools: specs,
      thinking: input.thinking,
    };
    for await (const chunk of input.provider.stream(request, input.ctx.signal)) {
      if (chunk.type === "text") {
        turnText += chunk.text;
        input.events.emit("assistant", { type: "text", text: chunk.text });
      } else if (chunk.type === "thinking" && !thinkingShown) {
        thinkingShown = true;
        input.events.emit("lifecycle", { phase: "thinking" });
      } else if (chunk.type === "tool_call") calls.push(chunk.call);
    }
    text += turnText;
    added.push({ role: "assistant", content: turnText, ...(calls.length ? { toolCalls: calls } : {}) });
    if (calls.length === 0) return { text, added };
    await input.confirmed;
    input.ctx.signal.throwIfAborted();
    for (const call of calls) added.push(await runTool(input, call));
  }
  throw new GatewayError("MODEL_ERROR", `the model still called tools after ${input.maxToolRounds} rounds`);
}
