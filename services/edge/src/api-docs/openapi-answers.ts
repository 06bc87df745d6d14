import { z } from "zod";

/** Answers of the HTTP endpoints (documentation only; see payloads.ts). */
export const Health = z.object({ ok: z.boolean(), status: z.enum(["ok", "degraded"]) });
export const Model = z.object({ id: z.string().describe("an agent id"), object: z.literal("model"), created: z.number(), owned_by: z.string() });
export const ModelList = z.object({ object: z.literal("list"), data: z.array(Model) });
const FinishReason = z.enum(["stop", "length", "tool_calls", "content_filter"]);
const ToolCall = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string().describe("JSON object text") }),
});
const ChatUsage = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
}).describe("the provider's counts, summed over the run's model calls");
export const ChatCompletion = z.object({
  id: z.string().describe("chatcmpl_<uuid>"),
  object: z.literal("chat.completion"),
  created: z.number().int().describe("Unix seconds"),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({
        role: z.literal("assistant"),
        content: z.union([z.string(), z.null()]),
        tool_calls: z.array(ToolCall).optional().describe("calls to the client's tools; finish_reason is tool_calls"),
      }),
      finish_reason: FinishReason,
    }),
  ),
  usage: ChatUsage,
});
export const ChatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal("chat.completion.chunk"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({
        role: z.literal("assistant").optional(),
        content: z.string().optional(),
        tool_calls: z.array(ToolCall.extend({ index: z.number().int() })).optional(),
      }),
      finish_reason: z.union([FinishReason, z.null()]),
    }),
  ),
  usage: z.union([ChatUsage, z.null()]).optional().describe("with stream_options.include_usage: null, then set in a last chunk with no choices"),
});
export const ResponseObject = z
  .object({
    id: z.string().describe("resp_<hex>"),
    object: z.literal("response"),
    created_at: z.number().int(),
    status: z.enum(["in_progress", "completed", "incomplete", "failed"]),
    model: z.string(),
    output: z.array(
      z.union([
        z.object({
          type: z.literal("message"),
          id: z.string(),
          status: z.string(),
          role: z.literal("assistant"),
          content: z.array(z.object({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.unknown()) })),
        }),
        z.object({ type: z.literal("function_call"), id: z.string(), call_id: z.string(), name: z.string(), arguments: z.string(), status: z.string() }),
      ]),
    ),
    usage: z.union([
      z.object({ input_tokens: z.number(), output_tokens: z.number(), total_tokens: z.number() }).loose(),
      z.null(),
    ]),
    error: z.union([z.object({ code: z.string(), message: z.string() }), z.null()]),
    incomplete_details: z.union([z.object({ reason: z.string() }), z.null()]),
  })
  .loose()
  .describe("OpenAI's response object; the request's settings are echoed beside these fields");
export const ResponseStreamEvent = z
  .object({ type: z.string().describe("response.created, response.output_text.delta, response.completed, error, ..."), sequence_number: z.number().int() })
  .loose();
export const ToolsInvokeResult = z.object({ ok: z.literal(true), result: z.record(z.string(), z.unknown()).describe("tool-specific; has content") });
