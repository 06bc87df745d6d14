import { ConfigError, type ConfigIssue, type HookMapping } from "@gw/config";
import { GatewayError, type HookWakeMode } from "@gw/contracts";
import type { AgentHook } from "../actions.js";
import { asText, type LookupContext, type LookupPath, lookup, parseLookupPath } from "./lookup-path.js";
import { compileTemplate, type Template } from "./template.js";

/** A mapping with its templates compiled. */
export interface CompiledMapping {
  path: string;
  action: HookMapping["action"];
  /** Absent: the message is the payload as JSON. */
  message?: Template;
  sessionKey?: Template;
  idempotencyField?: LookupPath;
}

/** What a mapping made of one request. */
export type RenderedAction = { kind: "wake"; text: string; wakeMode: HookWakeMode } | { kind: "agent"; hook: AgentHook };

/** hooks.mappings by path, every template compiled at start: a broken one stops the service with its key path. */
export class MappingTable {
  private constructor(private readonly byPath: ReadonlyMap<string, CompiledMapping>) {}

  static compile(mappings: readonly HookMapping[]): MappingTable {
    const issues: ConfigIssue[] = [];
    const byPath = new Map<string, CompiledMapping>();
    mappings.forEach((mapping, i) => {
      const at = `hooks.mappings[${i}]`;
      const compiled: CompiledMapping = { path: mapping.path, action: mapping.action };
      const attempt = <T>(key: string, make: () => T): T | undefined => {
        try {
          return make();
        } catch (err) {
          issues.push({ path: `${at}.${key}`, message: (err as Error).message });
          return undefined;
        }
      };
      const { message, sessionKey } = mapping.action;
      if (message !== undefined) compiled.message = attempt("action.message", () => compileTemplate(message));
      if (sessionKey !== undefined) compiled.sessionKey = attempt("action.sessionKey", () => compileTemplate(sessionKey));
      const field = mapping.idempotencyField;
      if (field !== undefined) compiled.idempotencyField = attempt("idempotencyField", () => parseLookupPath(field));
      byPath.set(mapping.path, compiled);
    });
    if (issues.length > 0) throw new ConfigError("hooks.mappings", issues);
    return new MappingTable(byPath);
  }

  get(path: string): CompiledMapping | undefined {
    return this.byPath.get(path);
  }
}

/**
 * Compiles every mapping's templates as the service does at start, and throws the same
 * ConfigError: how `gateway config check` finds a broken template before the gateway starts.
 */
export function checkHookMappings(mappings: readonly HookMapping[]): void {
  MappingTable.compile(mappings);
}

/** The delivery id a mapping names (`idempotencyField`), or undefined when it names none or the request lacks it. */
export function deliveryIdOf(mapping: CompiledMapping, ctx: LookupContext): string | undefined {
  if (mapping.idempotencyField === undefined) return undefined;
  const id = asText(lookup(mapping.idempotencyField, ctx));
  return id === "" ? undefined : id;
}

/** Fills a mapping's templates from one request. A rendered message that is empty is refused. */
export function renderMapping(mapping: CompiledMapping, ctx: LookupContext): RenderedAction {
  const text = mapping.message === undefined ? JSON.stringify(ctx.payload) : mapping.message.render(ctx);
  if (text.trim() === "") {
    throw new GatewayError("INVALID_REQUEST", `the message of hook "${mapping.path}" is empty for this request (its fields are missing)`);
  }
  const { action } = mapping;
  if (action.kind === "wake") return { kind: "wake", text, wakeMode: action.wakeMode };
  return {
    kind: "agent",
    hook: {
      message: text,
      agentId: action.agentId,
      sessionKey: mapping.sessionKey?.render(ctx),
      name: action.name ?? mapping.path,
      deliver: action.deliver,
      channel: action.channel,
      to: action.to,
      model: action.model,
      thinking: action.thinking,
      wakeMode: action.wakeMode,
      timeoutSeconds: action.timeoutSeconds,
    },
  };
}
