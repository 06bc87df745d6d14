import { describeIssues, GatewayError, type ToolResult } from "@gw/contracts";
import { z } from "zod";
import type { ToolSpec } from "../providers/model-provider.js";
import { boundToolResult } from "./result-bound.js";
import { allows } from "./tool-glob.js";

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

/** A built-in tool: its params checked by a zod schema, which is also what the model sees. */
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

/**
 * The tool port: what the registry runs, whether built in or served by an MCP server. Both pass
 * the contract suite in tool-port.contract.ts.
 */
export interface Tool {
  /** `<source>.<tool>` (`time.now`, `everything.echo`). */
  name: string;
  description: string;
  /** The params' JSON Schema (an object schema), as the model sees it. */
  parameters: Record<string, unknown>;
  /** The most JSON one result may take; the registry's bound when unset. */
  maxResultBytes?: number;
  /** Checks params and runs. A failure is a GatewayError whose message the model reads. */
  call(params: unknown, ctx: ToolContext): Promise<ToolResult>;
}

/** Where tools come from; an MCP server's list changes while the runner runs. */
export interface ToolSource {
  tools(): readonly Tool[];
}

/** A built-in tool on the port: zod checks the params and gives the model its JSON Schema. */
export function builtinTool(def: ToolDefinition): Tool {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(def.input, { io: "input" }) as Record<string, unknown>;
  return {
    name: def.name,
    description: def.description,
    parameters,
    call: async (params, ctx) => {
      const parsed = def.input.safeParse(params);
      if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "params"));
      return def.run(parsed.data, ctx);
    },
  };
}

/** Model APIs allow `[A-Za-z0-9_-]` in function names, so `time.now` travels as `time__now`. */
export function toWireName(name: string): string {
  return name.replace(/\./g, "__");
}

/** runner.maxToolResultBytes's default (256 KiB), for registries built without the config. */
export const DEFAULT_MAX_RESULT_BYTES = 262_144;

const isSource = (entry: ToolDefinition | ToolSource): entry is ToolSource => "tools" in entry && typeof entry.tools === "function";

/**
 * Every tool the runner knows, built in and from MCP servers; agents see the subset their
 * `tools` allow list names (exact names or `<source>.*`).
 */
export class ToolRegistry {
  private readonly sources: ToolSource[];

  /** `maxResultBytes`: runner.maxToolResultBytes, the most JSON a tool's result may take. */
  constructor(
    tools: readonly (ToolDefinition | ToolSource)[],
    private readonly opts: { maxResultBytes: number } = { maxResultBytes: DEFAULT_MAX_RESULT_BYTES },
  ) {
    const builtins: Tool[] = [];
    this.sources = [{ tools: () => builtins }];
    for (const entry of tools) {
      if (isSource(entry)) this.sources.push(entry);
      else builtins.push(builtinTool(entry));
    }
  }

  private all(): Tool[] {
    return this.sources.flatMap((source) => source.tools());
  }

  names(): string[] {
    return this.all()
      .map((t) => t.name)
      .sort();
  }

  /** The tools `allow` names, in its order (a `<source>.*` entry's tools sorted by name). */
  private allowed(allow: readonly string[]): Tool[] {
    const all = this.all().sort((a, b) => a.name.localeCompare(b.name));
    const out = new Map<string, Tool>();
    for (const entry of allow) for (const tool of all) if (allows([entry], tool.name) && !out.has(tool.name)) out.set(tool.name, tool);
    return [...out.values()];
  }

  /** The model-facing specs of the tools in `allow` that exist. */
  specs(allow: readonly string[]): ToolSpec[] {
    return this.allowed(allow).map((tool) => ({ name: toWireName(tool.name), description: tool.description, parameters: tool.parameters }));
  }

  /** The tool a model called by wire name, if the agent may use it. */
  fromWire(wireName: string, allow: readonly string[]): Tool | undefined {
    return this.allowed(allow).find((tool) => toWireName(tool.name) === wireName);
  }

  /** Checks and runs; unknown tools and bad params are INVALID_REQUEST with the reason. */
  async invoke(name: string, params: unknown, ctx: ToolContext): Promise<ToolResult> {
    const tool = this.all().find((t) => t.name === name);
    if (tool === undefined) throw new GatewayError("INVALID_REQUEST", `unknown tool: ${name}`);
    return this.run(tool, params, ctx);
  }

  async run(tool: Tool, params: unknown, ctx: ToolContext): Promise<ToolResult> {
    const result = await tool.call(params ?? {}, ctx);
    return boundToolResult(tool.name, result, tool.maxResultBytes ?? this.opts.maxResultBytes);
  }
}
