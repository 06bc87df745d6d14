export { type CommonArgs, parseCommonArgs } from "./args.js";
export {
  type HostOptions,
  loadServiceConfig,
  opsBindAddress,
  runMain,
  type ServiceHost,
  type ServiceHostWithFastStore,
  serviceConfigReader,
  startHost,
  serviceLogger,
  startOpsServers,
} from "./host.js";
export { busErrorSink, busObserver, redisErrorSink } from "./observability.js";
export { startTracing } from "./tracing.js";
