import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { describeIssues } from "../describe-issues.js";
import { HookAgentBodySchema, HookWakeBodySchema } from "./hook-bodies.js";

/** The edge's INVALID_REQUEST message for `body`, or undefined when it is valid. */
function problem(schema: z.ZodType, body: unknown): string | undefined {
  const parsed = schema.safeParse(body);
  return parsed.success ? undefined : describeIssues(parsed.error, "body");
}

describe("hook bodies", () => {
  it("refuse a wake text or an agent message that is empty or only whitespace, naming the field once", () => {
    for (const blank of [" ", "   ", "\n\t ", "\u00a0\u2003"]) {
      expect(problem(HookWakeBodySchema, { text: blank }), JSON.stringify(blank)).toBe("body.text: text must not be only whitespace");
      expect(problem(HookAgentBodySchema, { message: blank }), JSON.stringify(blank)).toBe("body.message: message must not be only whitespace");
    }
    expect(problem(HookWakeBodySchema, { text: "" })).toBe("body.text: text must not be empty");
    expect(problem(HookAgentBodySchema, { message: "" })).toBe("body.message: message must not be empty");
    expect(problem(HookAgentBodySchema, {})).toBe("body.message: message is required (a string)");
    // Text around the whitespace is the sender's, kept as sent.
    expect(HookWakeBodySchema.parse({ text: "  disk full \n" }).text).toBe("  disk full \n");
  });

  it("take a fractional timeoutSeconds within (0, 3600] and round it up to whole seconds", () => {
    const seconds = (timeoutSeconds: number) => HookAgentBodySchema.parse({ message: "m", timeoutSeconds }).timeoutSeconds;
    expect([seconds(1.5), seconds(0.001), seconds(2), seconds(3599.2), seconds(3600)]).toEqual([2, 1, 2, 3600, 3600]);
    expect(HookAgentBodySchema.parse({ message: "m" }).timeoutSeconds).toBeUndefined();
    for (const bad of [0, -1, 3600.5]) expect(problem(HookAgentBodySchema, { message: "m", timeoutSeconds: bad })).toMatch(/^body\.timeoutSeconds: /);
  });
});
