import type { Thinking } from "./model-provider.js";

/** OpenAI `reasoning_effort` has no level above high, so extended maps to high. */
export function openAiReasoningEffort(thinking: Thinking): "low" | "medium" | "high" {
  return thinking === "extended" ? "high" : thinking;
}

/** Anthropic extended-thinking budgets (`thinking.budget_tokens`); the minimum is 1024. */
export function anthropicThinkingBudget(thinking: Thinking): number {
  return { low: 1_024, medium: 4_096, high: 16_384, extended: 32_000 }[thinking];
}
