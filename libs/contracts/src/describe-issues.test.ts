import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeIssues } from "./describe-issues.js";

const Schema = z.object({
  limit: z.number({ error: "limit must be a number" }),
  nested: z.object({ items: z.array(z.string({ error: "must be a string" })) }).optional(),
});

function issuesOf(value: unknown): z.ZodError {
  const parsed = Schema.safeParse(value);
  if (parsed.success) throw new Error("expected a validation error");
  return parsed.error;
}

describe("describeIssues", () => {
  it("prefixes each issue's path with the root the client sent", () => {
    expect(describeIssues(issuesOf({ limit: "5" }), "params")).toBe("params.limit: limit must be a number");
    expect(describeIssues(issuesOf({ limit: "5" }), "body")).toBe("body.limit: limit must be a number");
  });

  it("names array positions and nested keys, and joins several issues with '; '", () => {
    expect(describeIssues(issuesOf({ nested: { items: ["a", 7] } }), "body")).toBe(
      "body.limit: limit must be a number; body.nested.items.1: must be a string",
    );
  });

  it("uses the bare path without a root, and the bare message when there is no path either", () => {
    expect(describeIssues(issuesOf({}), "")).toBe("limit: limit must be a number");
    expect(describeIssues(issuesOf("text"), "")).toBe("Invalid input: expected object, received string");
    expect(describeIssues(issuesOf("text"), "params")).toBe("params: Invalid input: expected object, received string");
  });

  it("stops after five issues", () => {
    const Many = z.object(Object.fromEntries(["a", "b", "c", "d", "e", "f", "g"].map((k) => [k, z.string()])));
    const parsed = Many.safeParse({});
    expect(parsed.success).toBe(false);
    const text = describeIssues(parsed.error!, "params");
    expect(text.split("; ")).toHaveLength(5);
    expect(text).not.toMatch(/params\.f/);
  });
});
