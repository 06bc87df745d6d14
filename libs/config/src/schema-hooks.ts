import { sessionKeyProblem } from "@gw/contracts";
import { z } from "zod";

const positiveInt = z.int().positive();

const sessionKey = z.string().superRefine((key, ctx) => {
  const problem = sessionKeyProblem(key);
  if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
});

/** When the agent run happens (agent) or the main session runs (wake). */
const wakeModeSchema = () => z.enum(["now", "next-heartbeat"]);

/** Keys only an `agent` action reads; a `wake` action refuses them rather than ignore them. */
const AGENT_ONLY_KEYS = ["channel", "to", "agentId", "sessionKey", "name", "deliver", "model", "thinking", "timeoutSeconds"] as const;

const hookActionSchema = () => z
  .strictObject({
    kind: z.enum(["agent", "wake"]),
    // A template over the request, e.g. "Issue {{ payload.issue.title }} was {{ payload.action }}":
    // `{{ payload.<path> }}`, `{{ headers.<name> }}`, `{{ query.<name> }}`, with `[n]` for array
    // items. Default: the payload as JSON.
    message: z.string().min(1).optional(),
    // agent: where the answer is delivered (channel id and recipient).
    channel: z.string().min(1).optional(),
    to: z.string().min(1).optional(),
    agentId: z.string().min(1).optional(),
    // agent: a template too ("github:{{ payload.repository.full_name }}"); default: a fresh hook:<uuid> per call.
    sessionKey: z.string().min(1).optional(),
    // agent: the sender shown in the session (default: the mapping's path).
    name: z.string().min(1).max(128).optional(),
    // agent: default true when channel or to is set, else false.
    deliver: z.boolean().optional(),
    model: z.string().min(3).optional(),
    thinking: z.enum(["low", "medium", "high"]).optional(),
    timeoutSeconds: positiveInt.max(3_600).optional(),
    wakeMode: wakeModeSchema().default("now"),
  })
  .superRefine((action, ctx) => {
    if (action.kind === "wake") {
      for (const key of AGENT_ONLY_KEYS) {
        if (action[key] !== undefined) ctx.addIssue({ code: "custom", path: [key], message: 'applies to kind "agent" only' });
      }
      return;
    }
    if (action.deliver === true && action.channel === undefined && action.to === undefined && action.sessionKey === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["deliver"],
        message: "deliver needs a destination: set to (and channel), or a channel's sessionKey",
      });
    }
  })
  .transform((action) => ({
    ...action,
    deliver: action.deliver ?? (action.kind === "agent" && (action.channel !== undefined || action.to !== undefined)),
  }));

// A lookup path such as "headers.x-github-delivery" or "payload.hook.id": the same paths as the
// templates, without braces.
const lookupPath = z
  .string()
  .regex(/^(payload|headers|query)(\.[^.\s[\]{}]+|\[\d+\])+$/, 'expected a path such as "headers.x-github-delivery" or "payload.delivery.id"');

const hookMappingSchema = () => z.strictObject({
  // Relative to hooks.path: "github" serves POST <hooks.path>/github.
  path: z
    .string()
    .regex(/^\/?[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, 'expected a URL path segment such as "github"')
    .transform((path) => path.replace(/^\//, "")),
  // Where this webhook's delivery id is: a repeat with the same id runs once (besides the
  // Idempotency-Key header, which every hook endpoint honours).
  idempotencyField: lookupPath.optional(),
  action: hookActionSchema(),
});

const heartbeatSchema = () => z
  .strictObject({
    // How often the main session gets a heartbeat turn that takes the queued wake texts.
    intervalSeconds: positiveInt.max(86_400).default(1_800),
    // The heartbeat turn's extra system prompt (what the turn is and what to do with it).
    prompt: z.string().min(1).max(65_536).optional(),
    // Where a heartbeat turn's answer is delivered; unset: it stays in the main session.
    channel: z.string().min(1).optional(),
    to: z.string().min(1).optional(),
    // Queued texts one heartbeat turn takes at most (the rest wait for the next).
    maxEventsPerTurn: positiveInt.max(1_000).default(100),
  })
  .prefault({});

export const hooksSectionSchema = () => z
  .strictObject({
    enabled: z.boolean().default(false),
    token: z.string().min(1).optional(),
    path: z
      .string()
      .regex(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, 'expected an absolute URL path such as "/hooks"')
      .default("/hooks"),
    maxBodyBytes: positiveInt.default(262_144),
    // The session wake texts and heartbeats run in.
    mainSessionKey: sessionKey.default("hook:main"),
    heartbeat: heartbeatSchema(),
    // A repeated delivery (same Idempotency-Key, or a mapping's idempotencyField) within this
    // window answers the first result and runs nothing.
    idempotencyWindowSeconds: positiveInt.default(86_400),
    mappings: z.array(hookMappingSchema()).default([]),
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

export type HooksConfig = z.output<ReturnType<typeof hooksSectionSchema>>;
export type HookMapping = HooksConfig["mappings"][number];
