export { ConfigError, type ConfigIssue } from "./config-error.js";
export type { Env } from "./env-substitution.js";
/** For tests that keep documentation (the example config) in step with a schema. */
export { hasKeyPath, schemaKeyPaths } from "./known-keys.js";
export { MODEL_CHAIN_SEPARATOR, type ModelRef, modelChainText, parseModelChain, parseModelRef, splitModelChain } from "./model-ref.js";
export {
  type ConfigFormat,
  type ConfigReader,
  type DeepPartial,
  defaultConfig,
  loadConfigFile,
  type ParseOptions,
  parseConfig,
} from "./parse-config.js";
export { type ConfigSection, type GatewayConfig, type GatewayConfigInput, gatewayConfigSchema } from "./schema.js";
export { type ChannelConfig, type ChannelsConfig, channelEntries } from "./schema-channels.js";
export type { HookMapping, HooksConfig } from "./schema-hooks.js";
export type { CronConfig } from "./schema-cron.js";
export { lastFiring, nextFiring, parseSchedule, type Schedule } from "./schedule.js";
export { BUILTIN_PROVIDER, modelTakesImages, providerKeys } from "./schema-models.js";
export { textOnlyModelOf } from "./image-input.js";
export { collectSecrets, maskSecrets, SECRET_MASK } from "./secrets.js";
export {
  type BindingMatch,
  type BindingProblem,
  type BindingRule,
  bindingFor,
  levelName,
  matches,
  overlappingBindings,
  type RouteTarget,
  specificityOf,
  unreachableBindings,
} from "./binding-match.js";
export { type Binding, bindingWarnings } from "./schema-bindings.js";
export { DEFAULT_QUEUE, type QueueMode, QueueSchema, type QueueSettings } from "./schema-queue.js";
