import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { describeIssues } from "../describe-issues.js";
import { AgentParamsSchema, AgentSubscribeParamsSchema, AgentUnsubscribeParamsSchema } from "./run-methods.js";

/** The edge's INVALID_REQUEST message for `params`, or undefined when they are valid. */
function problem(schema: z.ZodType, params: unknown): string | undefined {
  const parsed = schema.safeParse(params);
  return parsed.success ? undefined : describeIssues(parsed.error, "params");
}

describe("AgentParamsSchema", () => {
  it("takes session keys of the form <prefix>:<identifier> only (SPEC §2)", () => {
    for (const sessionKey of ["nocolon", ":x", "x:", "", "a b:c", `e2e:${"x".repeat(512)}`, "e2e:a\u0000b"]) {
      expect(problem(AgentParamsSchema, { message: "hi", sessionKey }), sessionKey).toMatch(/^params\.sessionKey: session key /);
    }
    for (const sessionKey of ["e2e:x", "telegram:@ops", "slack:#general", "user:a@b.c", "hook:a:b:c", "Web.Chat-1:+15551234567"]) {
      expect(problem(AgentParamsSchema, { message: "hi", sessionKey }), sessionKey).toBeUndefined();
    }
  });

  it("takes a fractional timeoutSeconds, as agent.wait does, within (0, 3600]", () => {
    expect(AgentParamsSchema.parse({ message: "hi", sessionKey: "e2e:x", timeoutSeconds: 1.5 }).timeoutSeconds).toBe(1.5);
    expect(problem(AgentParamsSchema, { message: "hi", sessionKey: "e2e:x", timeoutSeconds: 0 })).toMatch(/^params\.timeoutSeconds: /);
    expect(problem(AgentParamsSchema, { message: "hi", sessionKey: "e2e:x", timeoutSeconds: 3600.5 })).toMatch(/^params\.timeoutSeconds: /);
  });
});

describe("agent.subscribe / agent.unsubscribe params", () => {
  it("check a sessionKey target as the session methods do", () => {
    for (const schema of [AgentSubscribeParamsSchema, AgentUnsubscribeParamsSchema]) {
      expect(problem(schema, { sessionKey: "nocolon" })).toMatch(/^params\.sessionKey: session key /);
      expect(problem(schema, { sessionKey: ":x" })).toMatch(/^params\.sessionKey: session key /);
      expect(problem(schema, { sessionKey: "e2e:x" })).toBeUndefined();
    }
  });
});
