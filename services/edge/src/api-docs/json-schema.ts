import { z } from "zod";

/**
 * A zod schema as JSON Schema, the way a client must send it (`io: "input"`: fields with
 * defaults are optional). OpenAPI 3.1 takes draft 2020-12; AsyncAPI's schema format is
 * draft 07. Each document declares its dialect once, so the per-schema `$schema` goes.
 */
export function jsonSchema(schema: z.ZodType, target: "draft-2020-12" | "draft-7"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input", target, unrepresentable: "throw" }) as Record<
    string,
    unknown
  >;
  return rest;
}
