export { type CommonArgs, parseCommonArgs } from "./args.js";
export {
  type HostOptions,
  loadServiceConfig,
  runMain,
  type ServiceHost,
  type ServiceHostWithFastStore,
  startHost,
  startOpsServers,
} from "./host.js";
