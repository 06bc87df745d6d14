import { z } from "zod";
import { overlappingBindings, unreachableBindings } from "./binding-match.js";
import type { ConfigIssue } from "./config-error.js";
import { QueueSchema } from "./schema-queue.js";

const Id = z.string().trim().min(1, "must not be empty").max(256);

const bindingMatchSchema = () => z.strictObject({
  channel: Id,
  accountId: Id.optional(),
  peer: Id.optional(),
  group: Id.optional(),
  thread: Id.optional(),
});

/**
 * One routing rule: messages matching `match` go to `agentId`, under `dmPolicy` and `queue` when
 * given (instead of the account's).
 */
const bindingSchema = () => z.strictObject({
  match: bindingMatchSchema(),
  agentId: Id,
  dmPolicy: z.enum(["pairing", "allowlist", "open", "disabled"]).optional(),
  queue: QueueSchema.optional(),
});
export type Binding = z.output<ReturnType<typeof bindingSchema>>;

/**
 * Which agent answers which chats (issue 26 §2). References to channels, accounts and agents are
 * checked in schema.ts; here, bindings that can never answer.
 */
export const bindingsSectionSchema = () => z
  .array(bindingSchema())
  .max(1000)
  .default([])
  .superRefine((bindings, ctx) => {
    for (const { index, message } of unreachableBindings(bindings)) ctx.addIssue({ code: "custom", path: [index], message });
  });

/**
 * What `gateway config check` warns about: bindings of one level that can match the same
 * message, where the later one never answers. Not errors: an exception listed before a broader
 * rule is a normal way to write them.
 */
export function bindingWarnings(bindings: readonly Binding[]): ConfigIssue[] {
  return overlappingBindings(bindings).map(({ index, message }) => ({ path: `bindings[${index}]`, message }));
}
