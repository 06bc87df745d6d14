import { z } from "zod";

const HookActionSchema = z.strictObject({
  kind: z.enum(["agent", "wake"]),
  // A template over the request body, e.g. "Issue {{ payload.issue.title }} was {{ payload.action }}".
  message: z.string().optional(),
  channel: z.string().min(1).optional(),
  to: z.string().min(1).optional(),
  agentId: z.string().min(1).optional(),
});

const HookMappingSchema = z.strictObject({
  // Relative to hooks.path: "github" serves POST <hooks.path>/github.
  path: z
    .string()
    .regex(/^\/?[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, 'expected a URL path segment such as "github"')
    .transform((path) => path.replace(/^\//, "")),
  action: HookActionSchema,
});

export const HooksSectionSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    token: z.string().min(1).optional(),
    path: z
      .string()
      .regex(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, 'expected an absolute URL path such as "/hooks"')
      .default("/hooks"),
    maxBodyBytes: z.int().positive().default(262_144),
    mappings: z.array(HookMappingSchema).default([]),
  })
  .prefault({})
  .superRefine((hooks, ctx) => {
    if (hooks.enabled && hooks.token === undefined) {
      ctx.addIssue({ code: "custom", path: ["token"], message: "is required when hooks.enabled is true" });
    }
    // The built-in endpoints would shadow mappings of the same name.
    const seen = new Set(["wake", "agent"]);
    hooks.mappings.forEach((mapping, i) => {
      if (seen.has(mapping.path)) {
        ctx.addIssue({
          code: "custom",
          path: ["mappings", i, "path"],
          message: `"${mapping.path}" is already used by ${mapping.path === "wake" || mapping.path === "agent" ? "a built-in hook endpoint" : "another mapping"}`,
        });
      }
      seen.add(mapping.path);
    });
  });
