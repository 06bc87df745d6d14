export { type BackoffPolicy, retryDelay, sleep } from "./backoff.js";
export { type HealthServer, type HealthServerOptions, LIVENESS_SERVICE, startHealthServer } from "./health-server.js";
export { createLogger, type Logger, type LoggerOptions, REDACT_PATHS } from "./logger.js";
export {
  createMetrics,
  type MeteredRequest,
  type Metrics,
  type MetricSpec,
  type MetricsOptions,
  RequestDurations,
  RequestMeter,
  type Surface,
  type Tally,
} from "./metrics.js";
export {
  guardProcess,
  type ProcessFaultKind,
  type ProcessGuardOptions,
  type UncaughtExceptionPolicy,
} from "./process-guard.js";
export { type MetricsServer, type MetricsServerOptions, startMetricsServer } from "./metrics-server.js";
export { createSecretScrubber, REDACTED } from "./secret-scrubber.js";
export { Shutdown, type ShutdownHook, type ShutdownOptions } from "./shutdown.js";
