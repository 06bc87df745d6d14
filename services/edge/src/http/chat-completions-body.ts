import { GatewayError } from "@gw/contracts";
import { z } from "zod";

const ContentSchema = z.union([
  z.string(),
  z.array(z.object({ type: z.string(), text: z.string().optional() })),
  z.null(),
]);

export const ChatCompletionsBodySchema = z.object({
  model: z.string({ error: "model is required" }).min(1, "model must not be empty").max(256),
  messages: z
    .array(z.object({ role: z.string().min(1), content: ContentSchema.optional() }), {
      error: "messages must be an array of { role, content }",
    })
    .min(1, "messages must not be empty"),
  stream: z.boolean().default(false),
  user: z.string().min(1).max(256).optional(),
});
export type ChatCompletionsBody = z.infer<typeof ChatCompletionsBodySchema>;

function text(content: z.infer<typeof ContentSchema> | undefined): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  return content
    .filter((part) => part.type === "text")
    .map((part) => part.text ?? "")
    .join("");
}

/**
 * What a chat-completions request asks of an agent: the latest user message is the turn,
 * system messages become the extra system prompt, and the turns before it are the history
 * of a stateless request (with `user`, the session that `user` names holds the history).
 */
export function chatTurn(body: ChatCompletionsBody): {
  message: string;
  extraSystemPrompt?: string;
  history: Array<{ role: "user" | "assistant"; content: string }>;
} {
  const lastUserIndex = body.messages.findLastIndex((m) => m.role === "user");
  const message = text(body.messages[lastUserIndex]?.content);
  if (message.trim() === "") throw new GatewayError("INVALID_REQUEST", "messages must include a user message with text");
  // The turns before the latest user message, for stateless requests (no `user`).
  const history = body.messages
    .slice(0, lastUserIndex)
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => ({ role: m.role as "user" | "assistant", content: text(m.content) }))
    .filter((m) => m.content !== "");
  const system = body.messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => text(m.content))
    .filter(Boolean)
    .join("\n\n");
  return { message, history, ...(system ? { extraSystemPrompt: system } : {}) };
}

/** `agent:<id>` or a bare agent id. */
export function agentIdOfModel(model: string): string {
  return model.startsWith("agent:") ? model.slice("agent:".length) : model;
}
