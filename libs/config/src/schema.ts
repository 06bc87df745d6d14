import { z } from "zod";
import { splitModelChain } from "./model-ref.js";
import { agentsSectionSchema } from "./schema-agents.js";
import { type Binding, bindingsSectionSchema } from "./schema-bindings.js";
import { channelsSectionSchema } from "./schema-channels.js";
import { cronSectionSchema } from "./schema-cron.js";
import { deliverySectionSchema } from "./schema-delivery.js";
import { gatewaySectionSchema } from "./schema-gateway.js";
import { hooksSectionSchema } from "./schema-hooks.js";
import { natsSectionSchema, opsSectionSchema, redisSectionSchema } from "./schema-infra.js";
import { runnerSectionSchema } from "./schema-runner.js";
import { sessionsSectionSchema } from "./schema-sessions.js";
import { BUILTIN_PROVIDER, modelsSectionSchema } from "./schema-models.js";

/**
 * The whole config file. Section schemas check what they can see on their own; this level
 * checks references between sections (agent -> provider, hook -> agent/channel). Zod runs
 * these only once every section is valid, so such issues show up after local ones are fixed.
 */
const buildGatewayConfigSchema = () => z
  .strictObject({
    gateway: gatewaySectionSchema(),
    hooks: hooksSectionSchema(),
    cron: cronSectionSchema(),
    agents: agentsSectionSchema(),
    models: modelsSectionSchema(),
    runner: runnerSectionSchema(),
    sessions: sessionsSectionSchema(),
    channels: channelsSectionSchema(),
    bindings: bindingsSectionSchema(),
    delivery: deliverySectionSchema(),
    nats: natsSectionSchema(),
    redis: redisSectionSchema(),
    ops: opsSectionSchema(),
  })
  .superRefine((config, ctx) => {
    const providers = Object.keys(config.models.providers);
    config.agents.list.forEach((agent, i) => {
      // A list with a bad entry is still a list here (its transform did not run): checked no further.
      const chain = typeof agent.model === "string" ? splitModelChain(agent.model) : undefined;
      for (const { provider } of chain ?? []) {
        if (provider === BUILTIN_PROVIDER || providers.includes(provider)) continue;
        ctx.addIssue({
          code: "custom",
          path: ["agents", "list", i, "model"],
          message: `unknown model provider "${provider}" (known: ${[BUILTIN_PROVIDER, ...providers].join(", ")})`,
        });
      }
    });
    const isChannel = (id: string) => id !== "default" && id in config.channels;
    if (config.hooks.heartbeat.channel !== undefined && !isChannel(config.hooks.heartbeat.channel)) {
      ctx.addIssue({
        code: "custom",
        path: ["hooks", "heartbeat", "channel"],
        message: `"${config.hooks.heartbeat.channel}" is not a configured channel`,
      });
    }
    // The edge refuses any body over gateway.limits.maxBodyBytes before routing: a larger hook
    // limit would never apply.
    if (config.hooks.maxBodyBytes > config.gateway.limits.maxBodyBytes) {
      ctx.addIssue({
        code: "custom",
        path: ["hooks", "maxBodyBytes"],
        message: `must not exceed gateway.limits.maxBodyBytes (${config.gateway.limits.maxBodyBytes})`,
      });
    }
    const agentIds = new Set(config.agents.list.map((agent) => agent.id));
    config.bindings.forEach((binding, i) => {
      for (const { key, message } of bindingReferenceIssues(binding, config.channels, agentIds)) {
        ctx.addIssue({ code: "custom", path: ["bindings", i, ...key], message });
      }
    });
    config.hooks.mappings.forEach(({ action }, i) => {
      if (action.agentId !== undefined && !agentIds.has(action.agentId)) {
        ctx.addIssue({
          code: "custom",
          path: ["hooks", "mappings", i, "action", "agentId"],
          message: `"${action.agentId}" is not an agent in agents.list`,
        });
      }
      if (action.channel !== undefined && !isChannel(action.channel)) {
        ctx.addIssue({
          code: "custom",
          path: ["hooks", "mappings", i, "action", "channel"],
          message: `"${action.channel}" is not a configured channel`,
        });
      }
    });
    config.cron.jobs.forEach((job, i) => {
      if (!agentIds.has(job.agentId)) {
        ctx.addIssue({ code: "custom", path: ["cron", "jobs", i, "agentId"], message: `"${job.agentId}" is not an agent in agents.list` });
      }
      if (job.deliver !== undefined && !isChannel(job.deliver.channel)) {
        ctx.addIssue({ code: "custom", path: ["cron", "jobs", i, "deliver", "channel"], message: `"${job.deliver.channel}" is not a configured channel` });
      }
    });
  });

/** What a binding names that the rest of the config must have: its channel, account and agent. */
function bindingReferenceIssues(binding: Binding, channels: Record<string, unknown>, agentIds: ReadonlySet<string>) {
  const issues: Array<{ key: string[]; message: string }> = [];
  if (!agentIds.has(binding.agentId)) issues.push({ key: ["agentId"], message: `"${binding.agentId}" is not an agent in agents.list` });
  const { channel, accountId } = binding.match;
  const entry = channel !== "default" && Object.hasOwn(channels, channel) ? channels[channel] : undefined;
  if (entry === undefined) {
    issues.push({ key: ["match", "channel"], message: `"${channel}" is not a configured channel` });
    return issues;
  }
  // A channel without `accounts` has one, named "default" (libs/channels DEFAULT_ACCOUNT_ID).
  const accounts = (entry as { accounts?: unknown }).accounts;
  const ids = accounts !== null && typeof accounts === "object" ? Object.keys(accounts) : ["default"];
  if (accountId !== undefined && !ids.includes(accountId)) {
    issues.push({ key: ["match", "accountId"], message: `channel "${channel}" has no account "${accountId}" (accounts: ${ids.join(", ")})` });
  }
  return issues;
}

type GatewayConfigSchema = ReturnType<typeof buildGatewayConfigSchema>;

let built: WeakRef<GatewayConfigSchema> | undefined;

/**
 * The config's schema, built when a config is read and not held after: a process reads its
 * config once, at start, and its schema (about 480 zod schemas, every section's) would otherwise
 * stay in the heap for the process's life. A later read while it is still alive reuses it; the
 * section schemas are functions for the same reason (docs/decisions.md, Runtime).
 */
export function gatewayConfigSchema(): GatewayConfigSchema {
  let schema = built?.deref();
  if (schema === undefined) {
    schema = buildGatewayConfigSchema();
    built = new WeakRef(schema);
  }
  return schema;
}

export type GatewayConfig = z.output<GatewayConfigSchema>;
/** What a config file may contain (keys with defaults are optional). */
export type GatewayConfigInput = z.input<GatewayConfigSchema>;
/** A top-level key of the config file: what a service declares it reads (ConfigReader). */
export type ConfigSection = keyof GatewayConfig;
