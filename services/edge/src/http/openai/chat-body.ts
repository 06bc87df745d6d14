import type { ToolChoice } from "@gw/contracts";
import { z } from "zod";
import { readParts, runAttachments } from "./content-parts.js";
import { message, type OpenAiRequest } from "./conversation.js";
import {
  checkArguments,
  EffortSchema,
  FunctionNameSchema,
  HintFields,
  invalidParam,
  JsonSchemaFormat,
  MaxTokensSchema,
  opt,
  ParametersSchema,
  parseBody,
  SamplingFields,
  sampling,
} from "./params.js";

/** Content parts are checked by hand, so an unsupported part is named by its path. */
const PartSchema = z.object({ type: z.string() }).loose();
const ContentSchema = z.union([z.string(), z.array(PartSchema), z.null()]).optional();

const ToolCallSchema = z.object({
  id: z.string().min(1).max(256),
  type: z.literal("function"),
  function: z.object({ name: FunctionNameSchema, arguments: z.string() }),
});

/** Message fields the API echoes back (`refusal`, `annotations`...) are accepted and not read. */
const MessageSchema = z.object({
  role: z.enum(["system", "developer", "user", "assistant", "tool"], {
    error: "role must be system, developer, user, assistant or tool",
  }),
  content: ContentSchema,
  name: z.string().max(256).optional(),
  tool_calls: opt(z.array(ToolCallSchema).max(128)),
  tool_call_id: z.string().min(1).max(256).optional(),
  function_call: z.null().optional(),
});

const ToolSchema = z.object({
  type: z.literal("function", { error: 'only "function" tools are supported' }),
  function: z.object({
    name: FunctionNameSchema,
    description: z.string().max(16_384).optional(),
    parameters: ParametersSchema.optional(),
    strict: z.boolean().nullish(),
  }),
});

const ToolChoiceSchema = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: FunctionNameSchema }) }),
]);

const ResponseFormatSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({ type: z.literal("json_schema"), json_schema: JsonSchemaFormat }),
]);

/**
 * `POST /v1/chat/completions`. Strict: a parameter the gateway does not know is refused, as the
 * OpenAI API refuses it, and those it knows but cannot honour accept only their default value.
 */
export const ChatBodySchema = z.strictObject({
  model: z.string({ error: "model is required" }).min(1, "model must not be empty").max(256),
  messages: z.array(MessageSchema, { error: "messages must be an array of { role, content }" }).min(1, "messages must not be empty").max(4_096),
  stream: opt(z.boolean()),
  stream_options: opt(z.strictObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() })),
  tools: opt(z.array(ToolSchema).max(128)),
  tool_choice: opt(ToolChoiceSchema),
  max_tokens: MaxTokensSchema,
  max_completion_tokens: MaxTokensSchema,
  stop: opt(z.union([z.string(), z.array(z.string()).max(4)])),
  response_format: opt(ResponseFormatSchema),
  reasoning_effort: EffortSchema,
  n: opt(z.literal(1, { error: "only n = 1 is supported: an agent run gives one answer" })),
  logprobs: opt(z.literal(false, { error: "logprobs are not supported" })),
  store: opt(z.literal(false, { error: "completions are not stored; leave store out or false" })),
  ...SamplingFields,
  ...HintFields,
});
export type ChatBody = z.infer<typeof ChatBodySchema>;

type Content = z.infer<typeof ContentSchema>;

const TEXT_PARTS = new Set(["text"]);

/** Text parts, and image parts in user messages (content-parts.ts). */
function read(content: Content, where: string, images: boolean) {
  if (content === undefined || content === null) return { text: "", images: [], imageParams: [] };
  if (typeof content === "string") return { text: content, images: [], imageParams: [] };
  return readParts(content, where, { text: TEXT_PARTS, images });
}

function toolChoice(choice: ChatBody["tool_choice"]): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === "string") return { mode: choice, functionName: "" };
  return { mode: "function", functionName: choice.function.name };
}

function conversation(body: ChatBody): Pick<OpenAiRequest, "system" | "messages" | "imageParams"> {
  const system: string[] = [];
  const messages: OpenAiRequest["messages"] = [];
  const imageParams: string[] = [];
  body.messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    const parts = read(m.content, where, m.role === "user");
    const content = parts.text;
    imageParams.push(...parts.imageParams);
    if (m.role === "system" || m.role === "developer") system.push(content);
    else if (m.role === "user") messages.push({ ...message("user", content, { attachments: runAttachments(parts) }), where });
    else if (m.role === "tool") {
      if (m.tool_call_id === undefined) throw invalidParam(`${where}.tool_call_id`, "a tool message needs tool_call_id");
      messages.push({ ...message("tool", content, { toolCallId: m.tool_call_id }), where });
    } else {
      const toolCalls = (m.tool_calls ?? []).map((c, j) => ({
        id: c.id,
        name: c.function.name,
        arguments: checkArguments(c.function.arguments, `${where}.tool_calls[${j}].function.arguments`),
      }));
      messages.push({ ...message("assistant", content, { toolCalls }), where });
    }
  });
  return { system, messages, imageParams };
}

/** A chat-completions body as an agent run's request (see conversation.ts). */
export function chatRequest(raw: unknown, resolveAgent: (model: string) => string): { body: ChatBody; request: OpenAiRequest } {
  const body = parseBody(ChatBodySchema, raw);
  const agentId = resolveAgent(body.model);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (body.max_tokens !== undefined && body.max_completion_tokens !== undefined && body.max_tokens !== body.max_completion_tokens)
    throw invalidParam("max_tokens", "max_tokens and max_completion_tokens disagree; send one");
  const stop = typeof body.stop === "string" ? [body.stop] : body.stop;
  return {
    body,
    request: {
      model: body.model,
      agentId,
      ...conversation(body),
      clientTools: (body.tools ?? []).map((t) => ({
        name: t.function.name,
        description: t.function.description ?? "",
        parametersJson: t.function.parameters === undefined ? "" : JSON.stringify(t.function.parameters),
      })),
      toolChoice: toolChoice(body.tool_choice),
      sampling: sampling(body, {
        ...(maxTokens === undefined ? {} : { maxTokens }),
        ...(stop === undefined ? {} : { stop }),
        ...(body.response_format === undefined ? {} : { responseFormat: body.response_format }),
      }),
      thinking: body.reasoning_effort,
      user: body.user,
    },
  };
}
