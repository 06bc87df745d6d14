import { z } from "zod";
import { LOWER_ID } from "./model-ref.js";

/** Always present and needs no network; see the agent-runner's builtin provider. */
export const BUILTIN_PROVIDER = "builtin";

const ProviderSchema = z.strictObject({
  kind: z.enum(["openai", "anthropic"]),
  baseUrl: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }),
  apiKey: z.string().min(1).optional(),
  timeoutMs: z.int().positive().optional(),
});

export const ModelsSectionSchema = z
  .strictObject({
    providers: z.record(z.string(), ProviderSchema).default({}),
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
