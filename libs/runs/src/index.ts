export {
  type AgentEventInput,
  agentEventMessage,
  encodeAgentEvent,
  finalRecordMessage,
  finalRecordOf,
  isTerminalEvent,
  publishRunEnd,
  type RunAddress,
  runEventPart,
  type RunMessage,
  TERMINAL_SEQ,
  terminalMessages,
} from "./agent-events.js";
export { InProcessRunEventLog } from "./in-process-run-event-log.js";
export {
  ensureRunEventStream,
  JetStreamRunEventLog,
  runEventStreamConfig,
  runEventStreamNames,
  type RunEventStreamOptions,
} from "./jetstream-run-event-log.js";
export { inSeqOrder, retentionFor, type RunEventLog, type RunEventRetention } from "./run-event-log.js";
export { InProcessRunQueue } from "./in-process-run-queue.js";
export { JetStreamRunQueue, type JetStreamRunQueueOptions, runQueueNames } from "./jetstream-run-queue.js";
export type { RunConsumer, RunHandler, RunQueue } from "./run-queue.js";
export { type LiveRun, registryOptionsFor, RunRegistry, type RunRegistryOptions } from "./run-registry.js";
