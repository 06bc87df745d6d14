import { describeIssues, GatewayError, type SamplingParams } from "@gw/contracts";
import { z } from "zod";

/**
 * Pieces both OpenAI request bodies share: sampling parameters with the API's ranges, function
 * tools, and refusing what the gateway cannot honour with a 400 that names the parameter.
 */

/**
 * `param` is spelled as OpenAI spells it (`messages[0].content`); the message names the place the
 * way every validation message of the gateway does (`body.messages.0.content`, describeIssues).
 */
export function invalidParam(param: string, message: string): GatewayError {
  return new GatewayError("INVALID_REQUEST", `body.${dotted(param)}: ${message}`, { details: { param } });
}

function dotted(param: string): string {
  return param.replace(/\[(\d+)\]/g, ".$1");
}

/** Parses with `schema`; the error names the first bad parameter in `param` as OpenAI does. */
export function parseBody<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const path = (first?.path ?? []).map(String);
  const param = path.reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), "");
  if (first?.code === "unrecognized_keys") {
    // Refused as OpenAI refuses an unknown argument: silently ignoring it would change the answer.
    const key = first.keys[0]!;
    throw invalidParam(param ? `${param}.${key}` : key, "this parameter is not supported by the gateway");
  }
  throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "body"), param ? { details: { param } } : undefined);
}

/** Optional in the API, and `null` means "not set" there too. */
export const opt = <S extends z.ZodType>(schema: S) => schema.nullish().transform((v) => v ?? undefined);

export const SamplingFields = {
  temperature: opt(z.number().min(0).max(2)),
  top_p: opt(z.number().min(0).max(1)),
  seed: opt(z.number().int()),
  presence_penalty: opt(z.number().min(-2).max(2)),
  frequency_penalty: opt(z.number().min(-2).max(2)),
  parallel_tool_calls: opt(z.boolean()),
  user: opt(z.string().min(1).max(256)),
};

/**
 * What the official SDKs send that does not change the answer: request labels and routing hints
 * of the upstream API. Accepted so those clients work unmodified; the agent's own provider and
 * model decide (docs/decisions.md, "OpenAI parameters the SDKs send").
 */
export const HintFields = {
  metadata: opt(
    z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= 16, "at most 16 keys"),
  ),
  prompt_cache_key: opt(z.string().max(1_024)),
  prompt_cache_retention: opt(z.enum(["in-memory", "24h"])),
  safety_identifier: opt(z.string().max(256)),
  service_tier: opt(z.enum(["auto", "default", "flex", "scale", "priority"])),
};

export const MaxTokensSchema = opt(z.number().int().min(1).max(1_000_000));

/** `reasoning_effort` / `reasoning.effort` -> the agent run's thinking level. */
export const EffortSchema = opt(z.enum(["low", "medium", "high"], { error: "supported values: low, medium, high" }));

export const JsonSchemaFormat = z.object({
  name: z.string().min(1).max(64),
  description: z.string().optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().nullish(),
});

/** A chat-completions `response_format` (`text` means the default). */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: z.infer<typeof JsonSchemaFormat> };

export function sampling(
  body: {
    temperature?: number;
    top_p?: number;
    seed?: number;
    presence_penalty?: number;
    frequency_penalty?: number;
    parallel_tool_calls?: boolean;
    user?: string;
    prompt_cache_key?: string;
    safety_identifier?: string;
  },
  extra: { maxTokens?: number; stop?: string[]; responseFormat?: ResponseFormat },
): SamplingParams {
  return {
    temperature: body.temperature,
    topP: body.top_p,
    maxTokens: extra.maxTokens,
    stop: extra.stop ?? [],
    seed: body.seed,
    presencePenalty: body.presence_penalty,
    frequencyPenalty: body.frequency_penalty,
    responseFormatJson:
      extra.responseFormat === undefined || extra.responseFormat.type === "text" ? undefined : JSON.stringify(extra.responseFormat),
    user: body.user,
    parallelToolCalls: body.parallel_tool_calls,
    promptCacheKey: body.prompt_cache_key,
    safetyIdentifier: body.safety_identifier,
  };
}

/** Function names the model APIs accept. */
export const FunctionNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 letters, digits, _ or -");
export const ParametersSchema = z.record(z.string(), z.unknown());

/** Arguments of an assistant's tool call: the text of a JSON object, as the API sends them. */
export function checkArguments(text: string, param: string): string {
  try {
    const value: unknown = text.trim() === "" ? {} : JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return text.trim() === "" ? "{}" : text;
  } catch {
    // refused below
  }
  throw invalidParam(param, "must be the text of a JSON object");
}
