export {
  type AgentEventInput,
  agentEventMessage,
  encodeAgentEvent,
  finalRecordMessage,
  finalRecordOf,
  isTerminalEvent,
  type RunAddress,
  runEventPart,
  runEventSubjects,
  type RunMessage,
  TERMINAL_SEQ,
  terminalMessages,
} from "./agent-events.js";
export { type EndRunDeps, endOverdueRun, endRun } from "./end-run.js";
export { decodeRunRequest, queuedRecord, type Registration, registerRun, runRequest, type RunRequestFields } from "./run-request.js";
// Waiting for a run: the driver only; its machine (run-wait.ts) and the runner-death detector
// (runner-death.ts) are how it works, not what its callers use.
export type { RunWaitTimings } from "./run-wait.js";
export { type RunWaitingDeps, type RunWaitListener, RunWaiting } from "./run-waiting.js";
export { InProcessRunEventLog } from "./in-process-run-event-log.js";
export {
  ensureRunEventStream,
  JetStreamRunEventLog,
  runEventStreamConfigs,
  runEventStreamNames,
  type RunEventStreamOptions,
} from "./jetstream-run-event-log.js";
export { inSeqOrder, retentionFor, type RunEventLog, type RunEventRetention } from "./run-event-log.js";
export { InProcessRunQueue } from "./in-process-run-queue.js";
export { JetStreamRunQueue, type JetStreamRunQueueOptions, runQueueNames } from "./jetstream-run-queue.js";
export type { RunConsumer, RunHandler, RunQueue } from "./run-queue.js";
export { RunInbox, requestRunAbort } from "./run-inbox.js";
export { type LiveRun, registryOptionsFor, RunRegistry, type RunRegistryOptions } from "./run-registry.js";
