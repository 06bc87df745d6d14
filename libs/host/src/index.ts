export { type CommonArgs, parseCommonArgs } from "./args.js";
export {
  type HostOptions,
  loadServiceConfig,
  opsBindAddress,
  runMain,
  type ServiceHost,
  type ServiceHostWithFastStore,
  startHost,
  serviceLogger,
  startOpsServers,
} from "./host.js";
export { busErrorSink, busObserver, redisErrorSink } from "./observability.js";
export { startTracing } from "./tracing.js";
