import { z } from "zod";
import { LOWER_ID, type ModelRef } from "./model-ref.js";

/** Always present and needs no network; see the agent-runner's builtin provider. */
export const BUILTIN_PROVIDER = "builtin";

/** What a model reads: text always; images only where the provider or the model says so. */
const inputSchema = () => z.array(z.enum(["text", "image"], { error: 'input lists "text" and "image"' })).min(1);

const providerSchema = () => z.strictObject({
  kind: z.enum(["openai", "anthropic"]),
  baseUrl: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }),
  apiKey: z.string().min(1).optional(),
  /** Several keys of one account or project, used in turn; a key that got a 429 cools down alone. */
  apiKeys: z.array(z.string().min(1)).min(1, "must list at least one key").optional(),
  timeoutMs: z.int().positive().optional(),
  /**
   * Share of the calls when providers serving one model name stand next to each other in a
   * fallback chain, each with a weight: a call tries them in a random order drawn by weight.
   */
  weight: z.number().positive().max(1_000).optional(),
  /** What its models read (default text only): a request with images to a text-only model is refused, never cut. */
  input: inputSchema().optional(),
  /** Per model name, what differs from the provider's `input`. */
  models: z.record(z.string().min(1), z.strictObject({ input: inputSchema() })).optional(),
})
  .refine((p) => p.apiKey === undefined || p.apiKeys === undefined, {
    message: "set apiKey or apiKeys, not both",
    path: ["apiKeys"],
  });

/** The keys a provider's calls take turns with: apiKeys, else apiKey, else none (one keyless slot). */
export function providerKeys(p: { apiKey?: string; apiKeys?: string[] }): Array<string | undefined> {
  return p.apiKeys ?? [p.apiKey];
}

/**
 * Whether `<provider>/<model>` reads images: the model's `input`, else its provider's, else no.
 * builtin/echo does (it describes them); a provider not configured does not.
 */
export function modelTakesImages(providers: Readonly<Record<string, { input?: readonly string[]; models?: Readonly<Record<string, { input: readonly string[] }>> }>>, ref: ModelRef): boolean {
  if (ref.provider === BUILTIN_PROVIDER) return true;
  const provider = providers[ref.provider];
  const input = provider?.models?.[ref.model]?.input ?? provider?.input ?? [];
  return input.includes("image");
}

export const modelsSectionSchema = () => z
  .strictObject({
    providers: z.record(z.string(), providerSchema()).default({}),
  })
  .prefault({})
  .superRefine((models, ctx) => {
    for (const name of Object.keys(models.providers)) {
      if (name === BUILTIN_PROVIDER) {
        ctx.addIssue({
          code: "custom",
          path: ["providers", name],
          message: `"${BUILTIN_PROVIDER}" is reserved`,
        });
      } else if (!LOWER_ID.test(name)) {
        ctx.addIssue({
          code: "custom",
          path: ["providers", name],
          message: "provider names use lowercase letters, digits, '_' and '-'",
        });
      }
    }
  });
