import type { ToolChoice } from "@gw/contracts";
import { z } from "zod";
import { type ReadContent, readParts, runAttachments } from "./content-parts.js";
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
  type ResponseFormat,
} from "./params.js";

/** Items and content parts are checked by hand, so an unsupported one is named by its path. */
const LooseSchema = z.object({ type: z.string().optional() }).loose();

const ToolSchema = z.object({
  type: z.literal("function", { error: 'only "function" tools are supported' }),
  name: FunctionNameSchema,
  description: z.string().max(16_384).nullish(),
  parameters: ParametersSchema.nullish(),
  strict: z.boolean().nullish(),
});

const FormatSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  JsonSchemaFormat.extend({ type: z.literal("json_schema") }),
]);

/**
 * `include` values: extra output data on items this gateway never produces (hosted tools' calls,
 * images, reasoning items, logprobs), so asking for them changes nothing and needs no stored state.
 */
const INCLUDABLE = [
  "file_search_call.results",
  "web_search_call.results",
  "web_search_call.action.sources",
  "message.input_image.image_url",
  "computer_call_output.output.image_url",
  "code_interpreter_call.outputs",
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
] as const;

/**
 * `POST /v1/responses`. Stateless unless `store: true` or `previous_response_id`: then the
 * conversation lives in a session and `input` carries only the new turn (stored-responses.ts).
 * `item_reference` (items by id) is refused.
 */
export const ResponsesBodySchema = z.strictObject({
  model: z.string({ error: "model is required" }).min(1, "model must not be empty").max(256),
  input: z.union([z.string().min(1, "input must not be empty"), z.array(LooseSchema).min(1, "input must not be empty").max(4_096)], {
    error: "input must be a string or an array of items",
  }),
  instructions: opt(z.string().max(65_536)),
  stream: opt(z.boolean()),
  stream_options: opt(z.strictObject({ include_obfuscation: z.boolean().optional() })),
  tools: opt(z.array(ToolSchema).max(128)),
  tool_choice: opt(z.union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), name: FunctionNameSchema })])),
  max_output_tokens: MaxTokensSchema,
  text: opt(z.strictObject({ format: FormatSchema.optional() })),
  reasoning: opt(z.strictObject({ effort: EffortSchema, summary: opt(z.enum(["auto", "concise", "detailed"])) })),
  include: opt(z.array(z.enum(INCLUDABLE, { error: `supported values: ${INCLUDABLE.join(", ")}` })).max(16)),
  background: opt(z.literal(false, { error: "background responses need stored responses, which this gateway does not keep" })),
  store: opt(z.boolean()),
  previous_response_id: opt(z.string().min(1).max(256)),
  truncation: opt(z.literal("disabled", { error: "only truncation: disabled is supported" })),
  ...SamplingFields,
  ...HintFields,
});
export type ResponsesBody = z.infer<typeof ResponsesBodySchema>;

const TEXT_PARTS = new Set(["input_text", "output_text", "text"]);

/** Text parts, and `input_image` parts in user messages (content-parts.ts). */
function read(content: unknown, where: string, images: boolean): ReadContent {
  if (typeof content === "string") return { text: content, images: [], imageParams: [] };
  if (!Array.isArray(content)) throw invalidParam(`${where}.content`, "must be a string or an array of content parts");
  return readParts(content, where, { text: TEXT_PARTS, images });
}

function text(content: unknown, where: string): string {
  return read(content, where, false).text;
}

const MessageItem = z.object({ role: z.enum(["user", "system", "developer", "assistant"]), content: z.unknown() });
const CallItem = z.object({ call_id: z.string().min(1).max(256), name: FunctionNameSchema, arguments: z.string() });
const OutputItem = z.object({ call_id: z.string().min(1).max(256), output: z.unknown() });

function item<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw invalidParam([where, ...issue.path.map(String)].join("."), issue.message);
}

/** Input items as the run's conversation: consecutive function calls join the assistant turn. */
function conversation(body: ResponsesBody): Pick<OpenAiRequest, "system" | "messages" | "imageParams"> {
  const system = body.instructions === undefined ? [] : [body.instructions];
  const messages: OpenAiRequest["messages"] = [];
  const imageParams: string[] = [];
  if (typeof body.input === "string") return { system, messages: [{ ...message("user", body.input), where: "input" }], imageParams };
  body.input.forEach((raw, i) => {
    const where = `input[${i}]`;
    const type = raw.type ?? "message";
    if (type === "message") {
      const m = item(MessageItem, raw, where);
      const parts = read(m.content, where, m.role === "user");
      imageParams.push(...parts.imageParams);
      if (m.role === "system" || m.role === "developer") system.push(parts.text);
      else messages.push({ ...message(m.role, parts.text, { attachments: runAttachments(parts) }), where });
    } else if (type === "function_call") {
      const c = item(CallItem, raw, where);
      const call = { id: c.call_id, name: c.name, arguments: checkArguments(c.arguments, `${where}.arguments`) };
      const last = messages.at(-1);
      if (last?.role === "assistant") last.toolCalls.push(call);
      else messages.push({ ...message("assistant", "", { toolCalls: [call] }), where });
    } else if (type === "function_call_output") {
      const o = item(OutputItem, raw, where);
      const output = typeof o.output === "string" ? o.output : text(o.output, `${where}.output`);
      messages.push({ ...message("tool", output, { toolCallId: o.call_id }), where });
    } else if (type === "item_reference") {
      throw invalidParam(`${where}.type`, "items are not looked up by id: send the item itself, or continue a stored response with previous_response_id");
    } else throw invalidParam(`${where}.type`, `"${type}" input items are not supported`);
  });
  return { system, messages, imageParams };
}

function toolChoice(choice: ResponsesBody["tool_choice"]): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === "string") return { mode: choice, functionName: "" };
  return { mode: "function", functionName: choice.name };
}

function responseFormat(format: z.infer<typeof FormatSchema> | undefined): ResponseFormat | undefined {
  if (format === undefined || format.type !== "json_schema") return format;
  const { type, ...schema } = format;
  return { type, json_schema: schema };
}

/** A Responses body as an agent run's request (see conversation.ts). */
export function responsesRequest(raw: unknown, resolveAgent: (model: string) => string): { body: ResponsesBody; request: OpenAiRequest } {
  const body = parseBody(ResponsesBodySchema, raw);
  const agentId = resolveAgent(body.model);
  const format = responseFormat(body.text?.format);
  return {
    body,
    request: {
      model: body.model,
      agentId,
      ...conversation(body),
      clientTools: (body.tools ?? []).map((t) => ({
        name: t.name,
        description: t.description ?? "",
        parametersJson: t.parameters ? JSON.stringify(t.parameters) : "",
      })),
      toolChoice: toolChoice(body.tool_choice),
      sampling: sampling(body, {
        ...(body.max_output_tokens === undefined ? {} : { maxTokens: body.max_output_tokens }),
        ...(format === undefined ? {} : { responseFormat: format }),
      }),
      thinking: body.reasoning?.effort,
      user: body.user,
    },
  };
}
