import { z } from "zod";
import { modelChainText, splitModelChain, splitModelRef } from "./model-ref.js";

const modelRefSchema = () => z.string().refine((ref) => splitModelRef(ref) !== undefined, 'expected "<provider>/<model>"');

/**
 * One reference or an ordered fallback chain (a list, or its one-string form "a/x,b/y"), kept in
 * the one-string form so every reader of `model` sees a string as before.
 */
export const modelChainSchema = () => z
  .union([
    z.string().refine((ref) => splitModelChain(ref) !== undefined, 'expected "<provider>/<model>"'),
    z.array(modelRefSchema()).min(1, "must list at least one model"),
  ])
  .transform(modelChainText);

const agentSchema = () => z.strictObject({
  id: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9_-]{0,63}$/,
      "expected 1-64 lowercase letters, digits, '_' or '-', starting with a letter or digit",
    ),
  name: z.string().min(1),
  model: modelChainSchema(),
  description: z.string().default(""),
  avatar: z
    .union([z.literal(""), z.url({ protocol: /^https?$/, error: "expected an http(s) URL" })])
    .default(""),
  systemPrompt: z.string().optional(),
  tools: z.array(z.string().min(1)).default([]),
});

export const DEFAULT_AGENTS = [
  {
    id: "main",
    name: "Main",
    model: "builtin/echo",
    description: "Echoes your message back (offline builtin model)",
  },
];

export const agentsSectionSchema = () => z
  .strictObject({
    default: z.string().default("main"),
    list: z.array(agentSchema()).min(1, "must list at least one agent").prefault(DEFAULT_AGENTS),
  })
  .prefault({})
  .superRefine((agents, ctx) => {
    const seen = new Set<string>();
    agents.list.forEach((agent, i) => {
      if (seen.has(agent.id)) {
        ctx.addIssue({
          code: "custom",
          path: ["list", i, "id"],
          message: `duplicate agent id "${agent.id}"`,
        });
      }
      seen.add(agent.id);
    });
    if (!seen.has(agents.default)) {
      ctx.addIssue({
        code: "custom",
        path: ["default"],
        message: `"${agents.default}" is not an agent in agents.list (known: ${[...seen].join(", ")})`,
      });
    }
  });
