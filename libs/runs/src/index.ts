export { encodeAgentEvent, finalRecordOf, isTerminalEvent, TERMINAL_SEQ } from "./agent-events.js";
export { InProcessRunQueue } from "./in-process-run-queue.js";
export { JetStreamRunQueue, type JetStreamRunQueueOptions, runQueueNames } from "./jetstream-run-queue.js";
export type { RunConsumer, RunHandler, RunQueue } from "./run-queue.js";
export { registryOptionsFor, RunRegistry, type RunRegistryOptions } from "./run-registry.js";
