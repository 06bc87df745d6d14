import { describeIssues, GatewayError, type ToolResult } from "@gw/contracts";
import { z } from "zod";
import type { ToolSpec } from "../providers/model-provider.js";
import { boundToolResult } from "./result-bound.js";

export interface ToolContext {
  signal: AbortSignal;
  agentId: string;
  sessionKey: string;
  /** The run that calls the tool, when a run does (not for `POST /api/tools/invoke`). */
  runId?: string;
  /** The model's id for this call: with runId, stable across a retried run's replays. */
  toolCallId?: string;
}

export type { ToolResult };

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Dotted names (`time.now`) as clients and config see them. */
  name: string;
  description: string;
  input: S;
  run(input: z.output<S>, ctx: ToolContext): Promise<ToolResult>;
}

export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}

/** Model APIs allow `[A-Za-z0-9_-]` in function names, so `time.now` travels as `time__now`. */
export function toWireName(name: string): string {
  return name.replace(/\./g, "__");
}

/** runner.maxToolResultBytes's default (256 KiB), for registries built without the config. */
export const DEFAULT_MAX_RESULT_BYTES = 262_144;

/** Every tool the runner knows; agents see the subset their `tools` allow list names. */
export class ToolRegistry {
  private readonly byName = new Map<string, ToolDefinition>();
  private readonly byWire = new Map<string, ToolDefinition>();

  /** `maxResultBytes`: runner.maxToolResultBytes, the most JSON a tool's result may take. */
  constructor(
    tools: ToolDefinition[],
    private readonly opts: { maxResultBytes: number } = { maxResultBytes: DEFAULT_MAX_RESULT_BYTES },
  ) {
    for (const tool of tools) {
      this.byName.set(tool.name, tool);
      this.byWire.set(toWireName(tool.name), tool);
    }
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  /** The model-facing specs of the tools in `allow` that exist. */
  specs(allow: readonly string[]): ToolSpec[] {
    return allow.flatMap((name) => {
      const tool = this.byName.get(name);
      if (tool === undefined) return [];
      const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.input, { io: "input" }) as Record<string, unknown>;
      return [{ name: toWireName(tool.name), description: tool.description, parameters }];
    });
  }

  /** The tool a model called by wire name, if the agent may use it. */
  fromWire(wireName: string, allow: readonly string[]): ToolDefinition | undefined {
    const tool = this.byWire.get(wireName);
    return tool !== undefined && allow.includes(tool.name) ? tool : undefined;
  }

  /** Validates and runs; unknown tools and bad params are INVALID_REQUEST with the reason. */
  async invoke(name: string, params: unknown, ctx: ToolContext): Promise<ToolResult> {
    const tool = this.byName.get(name);
    if (tool === undefined) throw new GatewayError("INVALID_REQUEST", `unknown tool: ${name}`);
    return this.run(tool, params, ctx);
  }

  async run(tool: ToolDefinition, params: unknown, ctx: ToolContext): Promise<ToolResult> {
    const parsed = tool.input.safeParse(params ?? {});
    if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "params"));
    return boundToolResult(tool.name, await tool.run(parsed.data, ctx), this.opts.maxResultBytes);
  }
}
