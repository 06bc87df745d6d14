export { HOOKS_CONFIG_READS } from "./config-reads.js";
export { checkHookMappings } from "./mappings/mapping-table.js";
export { type HooksService, type HooksServiceDeps, startHooksService } from "./service.js";
