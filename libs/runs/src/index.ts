export {
  type AgentEventPayload,
  type AgentStream,
  encodeAgentEvent,
  finalRecordOf,
  isTerminalEvent,
  TERMINAL_SEQ,
} from "./agent-events.js";
export { InProcessRunQueue } from "./in-process-run-queue.js";
export { JetStreamRunQueue, type JetStreamRunQueueOptions } from "./jetstream-run-queue.js";
export type { RunConsumer, RunHandler, RunQueue } from "./run-queue.js";
export {
  DEFAULT_REGISTRY_OPTIONS,
  isFinal,
  type PayloadItem,
  type RunRecord,
  RunRegistry,
  type RunRegistryOptions,
  type RunState,
} from "./run-registry.js";
